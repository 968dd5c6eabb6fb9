# security/token/jwt.go — tokens are checked with no clock-skew leeway: a node whose clock is
# behind the issuer's refuses a token until its own clock reaches the token's iat and nbf.
s|^\(\tjwtLeeway = \)10 \* time.Second|\10 // mutant: no leeway|
