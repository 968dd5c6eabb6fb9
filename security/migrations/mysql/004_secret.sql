-- The generated JWT signing secret (hex), used when svc.security.secret is not configured: one
-- row, inserted once by the first node to start, read by every node on this database.
CREATE TABLE sys_security_secret (
    id         varchar(32)  PRIMARY KEY,
    secret     varchar(128) NOT NULL,
    created_at datetime(6)  NOT NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
