-- Change log of the security state (users, token families, sessions): every change inserts one
-- row in the transaction that makes it; every server polls rows after the last seq it saw and
-- drops the matching cache entries (security/changes.go).
CREATE TABLE sys_security_change (
    seq        bigint       NOT NULL AUTO_INCREMENT PRIMARY KEY,
    kind       varchar(16)  NOT NULL,
    ref        varchar(255) NOT NULL,
    created_at datetime(6)  NOT NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
CREATE INDEX ix_sys_security_change_created ON sys_security_change (created_at);
