// The list every definition tab shares: a find_page list with paging, New / Edit (or Details) /
// Delete by permission, extra row buttons, and the tab's editor in a dialog.
import type { ComponentChildren, VNode } from "preact";
import { useState } from "preact/hooks";
import { t } from "../../i18n";
import { can } from "../../session";
import type { Page, Params, Result } from "../../api";
import { Card, Dialog, ErrorBox, Field, PagedTable, useAction, useAsync } from "../../ui";
import { itg, type DefResource } from "./api";

const SIZE = 15;

/** SearchBox is a search form that reports the trimmed text on submit. */
export function SearchBox(props: { label: string; placeholder: string; onSearch: (q: string) => void }) {
  const [text, setText] = useState("");
  return (
    <form
      class="search"
      role="search"
      onSubmit={(e) => {
        e.preventDefault();
        props.onSearch(text.trim());
      }}
    >
      <label>
        <span class="sr-only">{props.label}</span>
        <input type="search" placeholder={props.placeholder} value={text} onInput={(e) => setText(e.currentTarget.value)} />
      </label>
      <button type="submit">{t("Search")}</button>
    </form>
  );
}

/** DefItem is one row of a definition resource's find_page. */
export type DefItem<R extends DefResource> = Result<`integration/${R}/find_page`>["items"][number];

export interface DefListProps<R extends DefResource, T = DefItem<R>> {
  /** resource under integration/, e.g. "system"; its tokens are integration.<perm>.<action>. */
  resource: R;
  perm: string;
  /** filter are find_page's search params; a change goes back to page 1. */
  filter: Params<`integration/${R}/find_page`>;
  title: ComponentChildren;
  newLabel: string;
  headings: string[];
  /** row is the cells of one item; rowAttrs its data-* attributes (tests, deep links). */
  row: (x: T) => ComponentChildren[];
  rowAttrs: (x: T) => Record<string, string>;
  extra?: (x: T) => ComponentChildren;
  empty: string;
  confirm: (x: T) => string;
  deleted: (x: T) => string;
  editor: (x: T | null, close: (saved: boolean) => void) => VNode;
  /** children are shown above the list (filters that need more room than the title). */
  children?: ComponentChildren;
}

export function DefList<R extends DefResource>(p: DefListProps<R>) {
  type T = DefItem<R>;
  const key = JSON.stringify(p.filter);
  // The page belongs to the filter it was chosen under: a new filter starts at page 1.
  const [at, setAt] = useState({ key, page: 1 });
  const page = at.key === key ? at.page : 1;
  const setPage = (n: number) => setAt({ key, page: n });
  const [edit, setEdit] = useState<T | "new" | null>(null);
  const act = useAction();
  // One cast: TypeScript does not resolve an operation name built from a type parameter.
  const list = useAsync(
    () => itg(`${p.resource}/find_page` as "system/find_page", p.filter as Params<"integration/system/find_page">, { page, size: SIZE }) as Promise<Page<T>>,
    [key, page],
  );
  const token = (action: string) => `integration.${p.perm}.${action}`;
  const del = (x: T) =>
    act.run(async () => {
      await itg(`${p.resource}/delete` as "system/delete", { id: x.id });
      list.reload();
    }, p.deleted(x));
  return (
    <Card
      title={p.title}
      actions={
        can(token("create")) && (
          <button type="button" class="primary" onClick={() => setEdit("new")}>
            {p.newLabel}
          </button>
        )
      }
    >
      {p.children}
      <PagedTable
        list={list}
        act={act}
        page={page}
        size={SIZE}
        onPage={setPage}
        headings={p.headings}
        actions
        empty={p.empty}
        row={(x) => (
          <tr key={x.id} {...p.rowAttrs(x)}>
            {p.row(x).map((c, i) => (
              <td key={i}>{c}</td>
            ))}
            <td class="row-actions">
              <button type="button" onClick={() => setEdit(x)}>
                {can(token("update")) ? t("Edit") : t("Details")}
              </button>
              {p.extra?.(x)}
              {can(token("delete")) && (
                <button
                  type="button"
                  class="danger"
                  onClick={() => {
                    if (window.confirm(p.confirm(x))) void del(x);
                  }}
                >
                  {t("Delete")}
                </button>
              )}
            </td>
          </tr>
        )}
      />
      {edit &&
        p.editor(edit === "new" ? null : edit, (saved) => {
          setEdit(null);
          if (saved) list.reload();
        })}
    </Card>
  );
}

/** Mono renders code-like text; Enabled the enabled/disabled badge. */
export const Mono = ({ children }: { children: ComponentChildren }) => <span class="mono">{children}</span>;
export const Enabled = ({ on }: { on: boolean }) => <span class={on ? "badge ok" : "badge"}>{on ? t("enabled") : t("disabled")}</span>;

/** canEdit tells whether the user may save an editor's form (update, or create when new). */
export function canEdit(perm: string, existing: boolean): boolean {
  return can(`integration.${perm}.${existing ? "update" : "create"}`);
}

/**
 * EditorDialog is a definition's form in a wide dialog: its fields (disabled when read-only),
 * the action's error, and Create or Save.
 */
export function EditorDialog(props: {
  title: string;
  onClose: () => void;
  onSubmit: (e: Event) => void;
  act: { error: unknown; busy: boolean };
  readOnly: boolean;
  isNew: boolean;
  children: ComponentChildren;
}) {
  return (
    <Dialog title={props.title} onClose={props.onClose} wide>
      <form onSubmit={props.onSubmit} class="editor">
        <fieldset disabled={props.readOnly} class="plain">
          {props.children}
        </fieldset>
        <ErrorBox error={props.act.error} />
        {!props.readOnly && (
          <div class="actions">
            <button type="submit" class="primary" disabled={props.act.busy}>
              {props.isNew ? t("Create") : t("Save")}
            </button>
          </div>
        )}
      </form>
    </Dialog>
  );
}

/** EnabledCheck is the Enabled checkbox of an editor. */
export function EnabledCheck(props: { value: boolean; onChange: (v: boolean) => void }) {
  return (
    <label class="check">
      <input type="checkbox" checked={props.value} onChange={(e) => props.onChange(e.currentTarget.checked)} />
      <span>{t("Enabled")}</span>
    </label>
  );
}

/** CodeName is the Code and Name fields every named definition has. */
export function CodeName(props: { code: string; name: string; onCode: (v: string) => void; onName: (v: string) => void }) {
  return (
    <>
      <Field label={t("Code")}>
        <input name="code" required class="mono" value={props.code} onInput={(e) => props.onCode(e.currentTarget.value)} />
      </Field>
      <Field label={t("Name")}>
        <input name="name" required value={props.name} onInput={(e) => props.onName(e.currentTarget.value)} />
      </Field>
    </>
  );
}
