// Key status of the systems' stored secrets (integration/ops key_status): sealed with the
// configured key, plaintext, or undecryptable, and whether `svc integration rotate-key` is due.
import { t } from "../../i18n";
import { Card, ListStatus, Table, useAsync } from "../../ui";
import { itg } from "./api";


export function KeyStatus() {
  const st = useAsync(() => itg("ops/key_status"), []);
  const d = st.data;
  return (
    <Card title={t("Secrets at rest and key rotation")} actions={<button type="button" onClick={st.reload}>{t("Refresh")}</button>}>
      <ListStatus list={st} />
      {d && (
        <>
          <p class="key-state">
            <span class={d.encrypted ? "badge ok" : "badge bad"}>{d.encrypted ? t("encrypted with the configured key") : t("no key: stored in plaintext")}</span>
            {d.encrypted && (
              <>
                {" "}
                <span class={d.rotationNeeded ? "badge bad" : "badge ok"}>{d.rotationNeeded ? t("rotation needed") : t("up to date")}</span>
              </>
            )}
          </p>
          {!d.encrypted && (
            <p class="muted" data-key-advice>
              {t("Without a key the systems' passwords, tokens and signing secrets are stored readable in the database: anyone who can read its file (./data/svc.db on the embedded default) or a backup of it can use them. Set a key (16, 24 or 32 random bytes in base64) and restart, then encrypt what is already stored:")}{" "}
              <code>SVC_INTEGRATION_SECRET_KEY=$(openssl rand -base64 32)</code>, <code>svc integration rotate-key --from "" --to KEY</code>
            </p>
          )}
          {d.encrypted && d.rotationNeeded && (
            <p class="muted">
              {t("Some secrets are plaintext or sealed with another key: run")} <code>svc integration rotate-key --from OLD --to NEW</code>
            </p>
          )}
          {d.systems.length ? (
            <Table headings={[t("System"), t("Sealed"), t("Plaintext"), t("Undecryptable")]}>
              {d.systems.map((s) => (
                <tr key={s.systemCode} data-key-system={s.systemCode}>
                  <td>
                    <span class="mono">{s.systemCode}</span> {s.systemName}
                  </td>
                  <td>{s.sealed}</td>
                  <td class={s.plaintext && d.encrypted ? "warn" : undefined}>{s.plaintext}</td>
                  <td class={s.undecryptable ? "warn" : undefined}>{s.undecryptable}</td>
                </tr>
              ))}
            </Table>
          ) : (
            <p class="muted">{t("No system holds secrets.")}</p>
          )}
        </>
      )}
    </Card>
  );
}
