// The console shell: sign-in gate, navigation filtered by permission, hash routes.
import { useEffect, useState } from "preact/hooks";
import { getTokens, onTokens } from "./api";
import { setLang, t, tk, useLang, type Lang } from "./i18n";
import { P } from "./perms";
import { can, loadUser, signOut, useUser } from "./session";
import { ErrorBox } from "./ui";
import { SignIn } from "./pages/signin";
import { Overview } from "./pages/overview";
import { Users } from "./pages/users";
import { Files } from "./pages/files";
import { Cron } from "./pages/cron";
import { Backups } from "./pages/backups";
import { Schema } from "./pages/schema";
import { Approval, InboxCount, approvalPresent, useApprovalPresence } from "./pages/approval";
import { Events } from "./pages/events";
import { Audit } from "./pages/audit";
import { Integration, integrationVisible } from "./pages/integration";

interface Route {
  path: string;
  label: string;
  visible: () => boolean;
  page: () => preact.JSX.Element;
  /** badge is shown beside the label in the navigation (a count). */
  badge?: () => preact.JSX.Element;
}

const routes: Route[] = [
  { path: "overview", label: "Overview", visible: () => can(P.monitor), page: () => <Overview /> },
  { path: "users", label: "Users", visible: () => can(P.userQuery), page: () => <Users /> },
  { path: "files", label: "Files", visible: () => true, page: () => <Files /> },
  { path: "backups", label: tk("Backups"), visible: () => can(P.backupQuery), page: () => <Backups /> },
  { path: "cron", label: "Cron", visible: () => can(P.cronQuery) || can(P.cronRuns), page: () => <Cron /> },
  { path: "approval", label: "Approval", visible: approvalPresent, page: () => <Approval />, badge: () => <InboxCount /> },
  { path: "schema", label: "Schema", visible: () => can(P.schema), page: () => <Schema /> },
  { path: "events", label: "Events", visible: () => can(P.eventQuery), page: () => <Events /> },
  { path: "audit", label: "Audit", visible: () => can(P.auditQuery), page: () => <Audit /> },
  { path: "integration", label: tk("Integration"), visible: integrationVisible, page: () => <Integration /> },
];

function currentPath(): string {
  return window.location.hash.replace(/^#\/?/, "").split("?")[0] ?? "";
}

function useHash(): string {
  const [p, set] = useState(currentPath());
  useEffect(() => {
    const on = () => set(currentPath());
    window.addEventListener("hashchange", on);
    return () => window.removeEventListener("hashchange", on);
  }, []);
  return p;
}

export function LangSwitch() {
  const lang = useLang();
  return (
    <select class="lang" aria-label={t("Language")} value={lang} onChange={(e) => setLang(e.currentTarget.value as Lang)}>
      <option value="en">English</option>
      <option value="zh-CN">简体中文</option>
    </select>
  );
}

export function App() {
  useLang();
  const user = useUser();
  useApprovalPresence();
  const [signedIn, setSignedIn] = useState(!!getTokens());
  const [loadError, setLoadError] = useState<unknown>(null);
  const [menuOpen, setMenuOpen] = useState(false);
  const path = useHash();

  useEffect(() => onTokens((tk) => setSignedIn(!!tk)), []);
  useEffect(() => {
    setLoadError(null);
    if (signedIn) loadUser().catch(setLoadError);
  }, [signedIn]);
  useEffect(() => setMenuOpen(false), [path]);

  if (!signedIn) return <SignIn />;
  if (!user) {
    return (
      <main class="center">
        {loadError ? <ErrorBox error={loadError} /> : <p class="muted">{t("Loading…")}</p>}
        {!!loadError && (
          <button type="button" onClick={() => void signOut()}>
            {t("Sign out")}
          </button>
        )}
      </main>
    );
  }
  const visible = routes.filter((r) => r.visible());
  const route = visible.find((r) => r.path === path) ?? visible[0];
  return (
    <div class="shell">
      <a class="skip" href="#main" onClick={(e) => (e.preventDefault(), document.getElementById("main")?.focus())}>
        {t("Skip to content")}
      </a>
      <header class="top">
        <button
          type="button"
          class="menu-toggle"
          aria-expanded={menuOpen}
          aria-controls="nav"
          onClick={() => setMenuOpen(!menuOpen)}
        >
          {t("Menu")}
        </button>
        <span class="brand">svc {t("console")}</span>
        <span class="spacer" />
        <LangSwitch />
        <span class="who" title={user.id}>
          {user.name}
        </span>
        <button type="button" onClick={() => void signOut()}>
          {t("Sign out")}
        </button>
      </header>
      <nav id="nav" class={menuOpen ? "side open" : "side"} aria-label={t("Main")}>
        <ul>
          {visible.map((r) => (
            <li key={r.path}>
              <a href={`#/${r.path}`} aria-current={route?.path === r.path ? "page" : undefined}>
                {t(r.label)}
                {r.badge?.()}
              </a>
            </li>
          ))}
        </ul>
      </nav>
      <main id="main" tabIndex={-1}>
        {route ? route.page() : <p class="muted">{t("Your account may not see any page of the console.")}</p>}
      </main>
    </div>
  );
}
