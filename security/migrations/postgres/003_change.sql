-- Change log of the security state (users, token families, sessions): every change inserts one
-- row in the transaction that makes it; every server polls rows after the last seq it saw and
-- drops the matching cache entries (security/changes.go).
CREATE TABLE sys_security_change (
    seq        bigserial    PRIMARY KEY,
    kind       varchar(16)  NOT NULL,
    ref        varchar(255) NOT NULL,
    created_at timestamptz  NOT NULL
);
CREATE INDEX ix_sys_security_change_created ON sys_security_change (created_at);
-- Every change row is also announced with NOTIFY at commit, so listening servers apply it at
-- once (the poll stays as the fallback). The payload is schema|kind|ref: servers of other
-- schemas of the database ignore it.
CREATE FUNCTION sys_security_change_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('svc_security_change', TG_TABLE_SCHEMA || '|' || NEW.kind || '|' || NEW.ref);
    RETURN NULL;
END
$$;
CREATE TRIGGER tr_sys_security_change_notify AFTER INSERT ON sys_security_change
    FOR EACH ROW EXECUTE FUNCTION sys_security_change_notify();
