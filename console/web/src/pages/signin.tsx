// Sign-in: password, then whatever challenge the server presents (TOTP and other one-time
// codes, a password change, a department choice), each answered through resolve_challenge.
// Lockout (1023) and rate-limit (1401) answers are shown in the server's own words.
import { useEffect, useRef, useState } from "preact/hooks";
import { call, setTokens } from "../api";
import type { LoginChallenge, LoginResult } from "../api/ops.gen";
import { LangSwitch } from "../app";
import { t } from "../i18n";
import { QRCode } from "../qr";
import { ErrorBox, Field, type Submit } from "../ui";

/** Challenge is a sign-in challenge with the data the console reads from it (the server
 * types data per challenge type, so the operation map says unknown). */
interface Challenge extends Omit<LoginChallenge, "data"> {
  data?: {
    destination?: string;
    reason?: string;
    departments?: { id: string; name: string }[];
    secret?: string; // totp_enrollment: the new authenticator's key, for this user only
    otpauthUrl?: string;
  };
}

export function SignIn() {
  const [username, setUsername] = useState("");
  const [password, setPassword] = useState("");
  const [answer, setAnswer] = useState("");
  const [pending, setPending] = useState<{ token: string; challenge: Challenge } | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const answerRef = useRef<HTMLInputElement & HTMLSelectElement>(null);

  useEffect(() => {
    if (pending) answerRef.current?.focus();
  }, [pending]);

  const settle = (r: LoginResult) => {
    if (r.tokens) {
      setTokens(r.tokens);
      return;
    }
    if (r.challengeToken && r.challenge) {
      setAnswer((r.challenge as Challenge).data?.departments?.[0]?.id ?? "");
      setPending({ token: r.challengeToken, challenge: r.challenge as Challenge });
    }
  };

  const submit = async (e: Submit) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      if (!pending) {
        settle(
          await call("security/auth/login",
            { type: "password", principal: username, credentials: password },
            { anonymous: true },
          ),
        );
      } else {
        settle(
          await call("security/auth/resolve_challenge",
            { challengeToken: pending.token, type: pending.challenge.type, response: answer },
            { anonymous: true },
          ),
        );
        setAnswer("");
      }
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  const ch = pending?.challenge;
  return (
    <main class="signin">
      <form class="card" onSubmit={submit} aria-labelledby="signin-title">
        <header class="card-head">
          <h1 id="signin-title">svc {t("console")}</h1>
          <LangSwitch />
        </header>
        {!ch && (
          <>
            <Field label={t("User name")}>
              <input
                name="username"
                autoComplete="username"
                required
                autoFocus
                value={username}
                onInput={(e) => setUsername(e.currentTarget.value)}
              />
            </Field>
            <Field label={t("Password")}>
              <input
                name="password"
                type="password"
                autoComplete="current-password"
                required
                value={password}
                onInput={(e) => setPassword(e.currentTarget.value)}
              />
            </Field>
          </>
        )}
        {ch?.type === "totp_enrollment" && (
          <div class="totp">
            <p>{t("An authenticator is required for this account. Scan the code with an authenticator app, then enter the code it shows.")}</p>
            <QRCode text={ch.data?.otpauthUrl ?? ""} label={t("QR code of the authenticator key")} />
            <p>
              {t("Key")}: <code class="secret">{ch.data?.secret}</code>
            </p>
          </div>
        )}
        {ch && ["totp", "sms_otp", "email_otp", "totp_enrollment"].includes(ch.type) && (
          <Field
            label={t("Verification code")}
            hint={t("Enter the code from {destination}.", { destination: ch.data?.destination ?? t("your authenticator app") })}
          >
            <input
              ref={answerRef}
              name="code"
              inputMode="numeric"
              autoComplete="one-time-code"
              pattern="[0-9]*"
              required
              value={answer}
              onInput={(e) => setAnswer(e.currentTarget.value.trim())}
            />
          </Field>
        )}
        {ch?.type === "password_change" && (
          <Field
            label={t("New password")}
            hint={ch.data?.reason === "expired" ? t("Your password has expired.") : t("Choose a new password.")}
          >
            <input
              ref={answerRef}
              name="new-password"
              type="password"
              autoComplete="new-password"
              required
              value={answer}
              onInput={(e) => setAnswer(e.currentTarget.value)}
            />
          </Field>
        )}
        {ch?.type === "department_selection" && (
          <Field label={t("Department")}>
            <select ref={answerRef} value={answer} onChange={(e) => setAnswer(e.currentTarget.value)}>
              {(ch.data?.departments ?? []).map((d) => (
                <option key={d.id} value={d.id}>
                  {d.name}
                </option>
              ))}
            </select>
          </Field>
        )}
        <ErrorBox error={error} />
        <div class="actions">
          {ch && (
            <button
              type="button"
              onClick={() => {
                setPending(null);
                setError(null);
              }}
            >
              {t("Back")}
            </button>
          )}
          <button type="submit" class="primary" disabled={busy}>
            {ch ? t("Verify") : t("Sign in")}
          </button>
        </div>
      </form>
    </main>
  );
}
