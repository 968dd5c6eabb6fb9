-- The generated JWT signing secret (hex), used when svc.security.secret is not configured: one
-- row, inserted once by the first node to start, read by every node on this database.
CREATE TABLE sys_security_secret (
    id         text      PRIMARY KEY,
    secret     text      NOT NULL,
    created_at timestamp NOT NULL
);
