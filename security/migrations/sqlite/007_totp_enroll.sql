-- An authenticator enrollment requested for the user by someone else (security/user begin_totp on
-- another account, issue #42): the user is shown the new secret at its next sign-in, never the
-- requester, and the flag clears when the user confirms it.
ALTER TABLE sys_security_user ADD COLUMN totp_enroll integer NOT NULL DEFAULT 0;
