-- The client address of the login that started a token family, listed by security/session
-- (issue #35). Families created before this migration have none.
ALTER TABLE sys_security_token_family ADD COLUMN client_ip varchar(64) NOT NULL DEFAULT '';
