-- Change log of the security state (users, token families, sessions): every change inserts one
-- row in the transaction that makes it; every server polls rows after the last seq it saw and
-- drops the matching cache entries (security/changes.go).
CREATE TABLE sys_security_change (
    seq        integer PRIMARY KEY AUTOINCREMENT,
    kind       text      NOT NULL,
    ref        text      NOT NULL,
    created_at timestamp NOT NULL
);
CREATE INDEX ix_sys_security_change_created ON sys_security_change (created_at);
