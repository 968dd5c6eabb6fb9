// Users and sessions of the built-in user store (security/user, security/session): list with
// search and paging, create, disable/enable, roles, password reset, TOTP enrollment with a QR
// code, a user's sessions with revoke and "sign out everywhere".
import { useState } from "preact/hooks";
import { call } from "../api";
import type { UserView } from "../api/ops.gen";
import { at, t, useLang } from "../i18n";
import { P } from "../perms";
import { QRCode } from "../qr";
import { auditLink } from "./audit";
import { can, useUser } from "../session";
import { Card, Dialog, EmptyRow, ErrorBox, Field, ListStatus, Notice, PagedTable, Table, useAction, useAsync, type Submit } from "../ui";


const SIZE = 15;

type Open = { kind: "create" } | { kind: "roles" | "password" | "totp" | "sessions"; user: UserView } | null;

export function Users() {
  useLang();
  const me = useUser();
  const [keyword, setKeyword] = useState("");
  const [query, setQuery] = useState("");
  const [page, setPage] = useState(1);
  const [open, setOpen] = useState<Open>(null);
  const act = useAction();
  const list = useAsync(
    () => call("security/user/find_page", query ? { keyword: query } : {}, { meta: { page, size: SIZE } }),
    [query, page],
  );
  const close = () => {
    setOpen(null);
    list.reload();
  };
  const toggle = (u: UserView) =>
    act.run(
      async () => {
        await call(u.disabled ? "security/user/enable" : "security/user/disable", { id: u.id });
        list.reload();
      },
      u.disabled ? t("{name} enabled.", { name: u.username }) : t("{name} disabled.", { name: u.username }),
    );

  return (
    <div class="page">
      <h1>{t("Users")}</h1>
      <Card
        actions={
          can(P.userCreate) && (
            <button type="button" class="primary" onClick={() => setOpen({ kind: "create" })}>
              {t("New user")}
            </button>
          )
        }
        title={
          <form
            class="search"
            role="search"
            onSubmit={(e) => {
              e.preventDefault();
              setPage(1);
              setQuery(keyword.trim());
            }}
          >
            <label>
              <span class="sr-only">{t("Search users")}</span>
              <input
                type="search"
                placeholder={t("Search by name")}
                value={keyword}
                onInput={(e) => setKeyword(e.currentTarget.value)}
              />
            </label>
            <button type="submit">{t("Search")}</button>
          </form>
        }
      >
        <PagedTable
          list={list}
          act={act}
          page={page}
          size={SIZE}
          onPage={setPage}
          headings={[t("User name"), t("Display name"), t("Roles"), t("State"), "TOTP", t("Password changed")]}
          actions
          empty={t("No users match.")}
          row={(u) => (
            <tr key={u.id} data-user={u.username}>
              <td class="mono">{u.username}</td>
              <td>{u.displayName}</td>
              <td>{u.roles.join(", ") || "–"}</td>
              <td>
                <span class={u.disabled ? "badge bad" : "badge ok"}>{u.disabled ? t("disabled") : t("active")}</span>
              </td>
              <td>{u.totpEnabled ? t("on") : u.totpPending ? t("pending") : t("off")}</td>
              <td>{at(u.passwordChangedAt)}</td>
              <td class="row-actions">
                {can(P.userDisable) && u.id !== me?.id && (
                  <button type="button" disabled={act.busy} onClick={() => void toggle(u)}>
                    {u.disabled ? t("Enable") : t("Disable")}
                  </button>
                )}
                {can(P.userRoles) && (
                  <button type="button" onClick={() => setOpen({ kind: "roles", user: u })}>
                    {t("Roles")}
                  </button>
                )}
                {can(P.userPassword) && (
                  <button type="button" onClick={() => setOpen({ kind: "password", user: u })}>
                    {t("Reset password")}
                  </button>
                )}
                {can(P.userTotp) && (
                  <button type="button" onClick={() => setOpen({ kind: "totp", user: u })}>
                    TOTP
                  </button>
                )}
                {can(P.sessionQuery) && (
                  <button type="button" onClick={() => setOpen({ kind: "sessions", user: u })}>
                    {t("Sessions")}
                  </button>
                )}
                {can(P.auditQuery) && (
                  <a class="button" href={auditLink(u.id, u.username)} data-audit-link={u.username}>
                    {t("Audit trail")}
                  </a>
                )}
              </td>
            </tr>
          )}
        />
      </Card>
      {open?.kind === "create" && <CreateUser onClose={close} />}
      {open?.kind === "roles" && <RolesDialog user={open.user} onClose={close} />}
      {open?.kind === "password" && <PasswordDialog user={open.user} onClose={close} />}
      {open?.kind === "totp" && <TotpDialog user={open.user} onClose={close} />}
      {open?.kind === "sessions" && <SessionsDialog user={open.user} onClose={close} />}
    </div>
  );
}

// RolePicker offers only the roles the signed-in user may grant (list_roles' grantable): the
// server refuses any other with 1074 anyway.
function RolePicker(props: { value: string[]; onChange: (v: string[]) => void }) {
  const roles = useAsync(() => call("security/user/list_roles"), []);
  const grantable = (roles.data ?? []).filter((r) => r.grantable !== false);
  const hidden = (roles.data?.length ?? 0) - grantable.length;
  return (
    <fieldset class="roles">
      <legend>{t("Roles")}</legend>
      <ErrorBox error={roles.error} />
      {grantable.map((r) => (
        <label key={r.name} class="check">
          <input
            type="checkbox"
            name="role"
            value={r.name}
            checked={props.value.includes(r.name)}
            onChange={(e) =>
              props.onChange(e.currentTarget.checked ? [...props.value, r.name] : props.value.filter((x) => x !== r.name))
            }
          />
          <span>
            {r.name} <small class="muted">{r.permissions.join(", ")}</small>
          </span>
        </label>
      ))}
      {roles.data && !roles.data.length && <p class="muted">{t("No roles are configured (svc.security.roles).")}</p>}
      {hidden > 0 && <p class="muted">{t("Only the roles whose permissions you hold yourself are offered.")}</p>}
    </fieldset>
  );
}

function CreateUser({ onClose }: { onClose: () => void }) {
  const [username, setUsername] = useState("");
  const [displayName, setDisplayName] = useState("");
  const [password, setPassword] = useState("");
  const [roles, setRoles] = useState<string[]>([]);
  const act = useAction();
  const submit = async (e: Submit) => {
    e.preventDefault();
    if (await act.run(() => call("security/user/create", { username, displayName, password, roles }))) onClose();
  };
  return (
    <Dialog title={t("New user")} onClose={onClose}>
      <form onSubmit={submit}>
        <Field label={t("User name")}>
          <input name="username" required autoComplete="off" value={username} onInput={(e) => setUsername(e.currentTarget.value)} />
        </Field>
        <Field label={t("Display name")}>
          <input name="displayName" value={displayName} onInput={(e) => setDisplayName(e.currentTarget.value)} />
        </Field>
        <Field label={t("Password")} hint={t("The server's password policy applies.")}>
          <input
            name="password"
            type="password"
            required
            autoComplete="new-password"
            value={password}
            onInput={(e) => setPassword(e.currentTarget.value)}
          />
        </Field>
        <RolePicker value={roles} onChange={setRoles} />
        <ErrorBox error={act.error} />
        <div class="actions">
          <button type="submit" class="primary" disabled={act.busy}>
            {t("Create")}
          </button>
        </div>
      </form>
    </Dialog>
  );
}

function RolesDialog({ user, onClose }: { user: UserView; onClose: () => void }) {
  const [roles, setRoles] = useState(user.roles);
  const act = useAction();
  const submit = async (e: Submit) => {
    e.preventDefault();
    if (await act.run(() => call("security/user/set_roles", { id: user.id, roles }))) onClose();
  };
  return (
    <Dialog title={t("Roles of {name}", { name: user.username })} onClose={onClose}>
      <form onSubmit={submit}>
        <RolePicker value={roles} onChange={setRoles} />
        <ErrorBox error={act.error} />
        <div class="actions">
          <button type="submit" class="primary" disabled={act.busy}>
            {t("Save")}
          </button>
        </div>
      </form>
    </Dialog>
  );
}

function PasswordDialog({ user, onClose }: { user: UserView; onClose: () => void }) {
  const [password, setPassword] = useState("");
  const act = useAction();
  const submit = async (e: Submit) => {
    e.preventDefault();
    await act.run(() => call("security/user/reset_password", { id: user.id, password }), t("Password changed. Tokens issued before no longer work."));
  };
  return (
    <Dialog title={t("Reset the password of {name}", { name: user.username })} onClose={onClose}>
      <form onSubmit={submit}>
        <Field label={t("New password")} hint={t("The server's password policy applies.")}>
          <input
            name="password"
            type="password"
            required
            autoComplete="new-password"
            value={password}
            onInput={(e) => setPassword(e.currentTarget.value)}
          />
        </Field>
        <ErrorBox error={act.error} />
        <Notice text={act.notice} />
        <div class="actions">
          <button type="submit" class="primary" disabled={act.busy}>
            {t("Set password")}
          </button>
        </div>
      </form>
    </Dialog>
  );
}

interface Enrollment {
  secret: string;
  otpauthUrl: string;
  atNextSignIn?: boolean;
}

function TotpDialog({ user, onClose }: { user: UserView; onClose: () => void }) {
  const [state, setState] = useState(user);
  const [enroll, setEnroll] = useState<Enrollment | null>(null);
  const [code, setCode] = useState("");
  const act = useAction();
  // the server answers the secret for one's own account only; for another it asks the user to
  // enroll at its next sign-in
  const begin = () =>
    act.run(async () => {
      const en = await call("security/user/begin_totp", { id: user.id });
      if (en.atNextSignIn) {
        setState(await call("security/user/get", { id: user.id }));
        return;
      }
      setEnroll(en);
    });
  const confirm = async (e: Submit) => {
    e.preventDefault();
    await act.run(async () => {
      setState(await call("security/user/confirm_totp", { id: user.id, code }));
      setEnroll(null);
      setCode("");
    }, t("TOTP is on: sign-in now asks for a code."));
  };
  const remove = () =>
    act.run(async () => setState(await call("security/user/remove_totp", { id: user.id })), t("TOTP removed."));
  return (
    <Dialog title={t("TOTP of {name}", { name: user.username })} onClose={onClose}>
      <p>
        {t("State")}: <strong>{state.totpEnabled ? t("on") : state.totpPending ? t("pending") : t("off")}</strong>
      </p>
      {state.totpEnrollAtSignIn && <p class="muted">{t("A new authenticator is enrolled at the user's next sign-in; only the user sees its key.")}</p>}
      {enroll ? (
        <form onSubmit={confirm} class="totp">
          <p>{t("Scan the code with an authenticator app, then enter the code it shows.")}</p>
          <QRCode text={enroll.otpauthUrl} label={t("QR code of the authenticator key")} />
          <p>
            {t("Key")}: <code class="secret">{enroll.secret}</code>
          </p>
          <Field label={t("Verification code")}>
            <input
              name="code"
              inputMode="numeric"
              autoComplete="one-time-code"
              required
              value={code}
              onInput={(e) => setCode(e.currentTarget.value.trim())}
            />
          </Field>
          <div class="actions">
            <button type="submit" class="primary" disabled={act.busy}>
              {t("Activate")}
            </button>
          </div>
        </form>
      ) : (
        <div class="actions">
          <button type="button" class="primary" disabled={act.busy} onClick={() => void begin()}>
            {state.totpEnabled ? t("Enroll a new authenticator") : t("Enroll an authenticator")}
          </button>
          {(state.totpEnabled || state.totpPending || state.totpEnrollAtSignIn) && (
            <button type="button" class="danger" disabled={act.busy} onClick={() => void remove()}>
              {t("Remove TOTP")}
            </button>
          )}
        </div>
      )}
      <ErrorBox error={act.error} />
      <Notice text={act.notice} />
    </Dialog>
  );
}

function SessionsDialog({ user, onClose }: { user: UserView; onClose: () => void }) {
  const list = useAsync(() => call("security/session/list", { userId: user.id }), []);
  const act = useAction();
  const revoke = (id: string) =>
    act.run(async () => {
      await call("security/session/revoke", { id });
      list.reload();
    }, t("Session revoked."));
  const everywhere = () =>
    act.run(async () => {
      const r = await call("security/session/revoke_user", { userId: user.id });
      list.reload();
      return r;
    }, t("Signed out everywhere."));
  const mayRevoke = can(P.sessionRevoke);
  return (
    <Dialog title={t("Sessions of {name}", { name: user.username })} onClose={onClose} wide>
      <ListStatus list={list} act={act} />
      {list.data && (
        <Table headings={[t("Kind"), t("Client IP"), t("Signed in"), t("Last seen"), t("Expires")]} actions>
          {list.data.items.map((s) => (
            <tr key={s.id}>
              <td>
                {s.kind === "session" ? t("session") : t("token family")}
                {s.current && <span class="badge ok">{t("this console")}</span>}
              </td>
              <td class="mono">{s.clientIp || "–"}</td>
              <td>{at(s.createdAt)}</td>
              <td>{at(s.lastSeenAt)}</td>
              <td>{at(s.expiresAt)}</td>
              <td>
                {mayRevoke && (
                  <button type="button" disabled={act.busy} onClick={() => void revoke(s.id)}>
                    {t("Revoke")}
                  </button>
                )}
              </td>
            </tr>
          ))}
          {!list.data.items.length && <EmptyRow cols={6} text={t("No live sessions.")} />}
        </Table>
      )}
      {mayRevoke && (
        <div class="actions">
          <button type="button" class="danger" disabled={act.busy} onClick={() => void everywhere()}>
            {t("Sign out everywhere")}
          </button>
        </div>
      )}
    </Dialog>
  );
}
