// Small shared pieces: async loading, error display, tables, paging, dialogs.
import { cloneElement, type ComponentChildren, type VNode } from "preact";
import { useCallback, useEffect, useId, useRef, useState } from "preact/hooks";
import { ApiError, type Page } from "./api";
import { duration, t } from "./i18n";

export interface Async<T> {
  data: T | undefined;
  error: unknown;
  loading: boolean;
  reload: () => void;
}

/** useAsync runs fn when deps change (and on reload) and keeps the latest answer. */
export function useAsync<T>(fn: () => Promise<T>, deps: unknown[]): Async<T> {
  const [state, setState] = useState<{ data?: T; error?: unknown; loading: boolean }>({ loading: true });
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let live = true;
    setState((s) => ({ ...s, loading: true }));
    fn().then(
      (data) => live && setState({ data, loading: false }),
      (error) => live && setState((s) => ({ data: s.data, error, loading: false })),
    );
    return () => {
      live = false;
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [...deps, tick]);
  const reload = useCallback(() => setTick((n) => n + 1), []);
  return { data: state.data, error: state.error, loading: state.loading, reload };
}

/** useInterval calls fn every ms while mounted and the page is visible. */
export function useInterval(fn: () => void, ms: number): void {
  const ref = useRef(fn);
  ref.current = fn;
  useEffect(() => {
    const id = setInterval(() => {
      if (document.visibilityState === "visible") ref.current();
    }, ms);
    return () => clearInterval(id);
  }, [ms]);
}

/** message renders an error the way the server worded it. */
export function message(err: unknown): string {
  if (err instanceof ApiError) return err.code === 1900 && err.status === 0 ? t("The server cannot be reached.") : err.message;
  if (err instanceof Error) return err.message;
  return String(err);
}

export function ErrorBox({ error }: { error: unknown }) {
  if (!error) return null;
  const code = error instanceof ApiError ? ` (${error.code})` : "";
  // A rate limit or a lockout says when to come back (the server's Retry-After).
  const wait = error instanceof ApiError && error.retryAfter != null ? error.retryAfter : null;
  return (
    <p class="error" role="alert">
      {message(error)}
      {code}
      {wait != null && ` ${t("Try again in {time}.", { time: wait < 60 ? `${wait}s` : duration(wait) })}`}
    </p>
  );
}

export function Notice({ text }: { text: string | null }) {
  if (!text) return null;
  return (
    <p class="notice" role="status">
      {text}
    </p>
  );
}

export function Card(props: { title?: ComponentChildren; children: ComponentChildren; class?: string; actions?: ComponentChildren }) {
  return (
    <section class={`card ${props.class ?? ""}`}>
      {(props.title || props.actions) && (
        <header class="card-head">
          {typeof props.title === "string" ? <h2>{props.title}</h2> : props.title}
          {props.actions && <div class="actions">{props.actions}</div>}
        </header>
      )}
      {props.children}
    </section>
  );
}

export function Pager(props: { page: number; size: number; total: number; onPage: (p: number) => void }) {
  const pages = Math.max(1, Math.ceil(props.total / props.size));
  return (
    <nav class="pager" aria-label={t("Pages")}>
      <button type="button" disabled={props.page <= 1} onClick={() => props.onPage(props.page - 1)}>
        {t("Previous")}
      </button>
      <span>{t("Page {page} of {pages} · {total} in all", { page: props.page, pages, total: props.total })}</span>
      <button type="button" disabled={props.page >= pages} onClick={() => props.onPage(props.page + 1)}>
        {t("Next")}
      </button>
    </nav>
  );
}

/** Dialog is a modal <dialog>: focus moves into it, Escape closes it. */
export function Dialog(props: { title: string; onClose: () => void; children: ComponentChildren; wide?: boolean }) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const d = ref.current;
    if (d && !d.open) d.showModal();
    return () => d?.close();
  }, []);
  return (
    <dialog ref={ref} class={props.wide ? "wide" : ""} aria-label={props.title} onClose={props.onClose} onCancel={props.onClose}>
      <header class="card-head">
        <h2>{props.title}</h2>
        <button type="button" class="icon" aria-label={t("Close")} onClick={props.onClose}>
          ×
        </button>
      </header>
      {props.children}
    </dialog>
  );
}

/** Field is a labelled form control: its one child element gets the label's id. */
export function Field(props: { label: string; children: VNode; hint?: string }) {
  const id = useId();
  return (
    <div class="field">
      <label for={id}>{props.label}</label>
      {cloneElement(props.children, { id, "aria-describedby": props.hint ? `${id}-hint` : undefined })}
      {props.hint && <small id={`${id}-hint`}>{props.hint}</small>}
    </div>
  );
}

export type Submit = Event;

/** useAction wraps a button action: busy flag, error, optional success notice. */
export function useAction() {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const run = useCallback(async (fn: () => Promise<unknown>, done?: string) => {
    setBusy(true);
    setError(null);
    setNotice(null);
    try {
      await fn();
      if (done) setNotice(done);
      return true;
    } catch (e) {
      setError(e);
      return false;
    } finally {
      setBusy(false);
    }
  }, []);
  return { busy, error, notice, run, setError };
}

export function Loading({ when }: { when: boolean }) {
  return when ? (
    <p class="muted" aria-live="polite">
      {t("Loading…")}
    </p>
  ) : null;
}

/** ListStatus shows a list's error (else its last action's), the action's notice, and the first load. */
export function ListStatus({ list, act }: { list: Async<unknown>; act?: { error: unknown; notice: string | null } }) {
  return (
    <>
      <ErrorBox error={list.error ?? act?.error} />
      <Notice text={act?.notice ?? null} />
      <Loading when={list.loading && !list.data} />
    </>
  );
}

/**
 * Table is a horizontally scrolling table with these column headings (plain text, or a node);
 * actions adds a last column whose heading only screen readers announce. Its children are the
 * body's rows.
 */
export function Table(props: { headings: ComponentChildren[]; actions?: boolean; children: ComponentChildren }) {
  return (
    <div class="table-wrap">
      <table>
        <thead>
          <tr>
            {props.headings.map((h, i) => (
              <th key={i}>{h}</th>
            ))}
            {props.actions && (
              <th>
                <span class="sr-only">{t("Actions")}</span>
              </th>
            )}
          </tr>
        </thead>
        <tbody>{props.children}</tbody>
      </table>
    </div>
  );
}

/** EmptyRow is a table's one row saying it has none, across cols columns. */
export function EmptyRow({ cols, text }: { cols: number; text: string }) {
  return (
    <tr>
      <td colSpan={cols} class="muted">
        {text}
      </td>
    </tr>
  );
}

/** StatusFilter is a search form's status select: "every status" (the empty value) and each of
 * statuses, shown translated. */
export function StatusFilter(props: { statuses: readonly string[]; value: string; onChange: (v: string) => void }) {
  return (
    <select aria-label={t("Status")} value={props.value} onChange={(e) => props.onChange(e.currentTarget.value)}>
      <option value="">{t("Every status")}</option>
      {props.statuses.map((s) => (
        <option key={s} value={s}>
          {t(s)}
        </option>
      ))}
    </select>
  );
}
/**
 * PagedTable is one page of a list: its status (error, notice, first load), the rows — or one
 * saying there are none — and the pager; a list whose data is null (not loaded for this caller)
 * shows its status alone. row renders one item as a <tr>.
 */
export function PagedTable<T>(props: {
  list: Async<Page<T> | null>;
  act?: { error: unknown; notice: string | null };
  page: number;
  size: number;
  onPage: (p: number) => void;
  headings: ComponentChildren[];
  actions?: boolean;
  empty: string;
  row: (item: T) => VNode;
}) {
  const { list } = props;
  return (
    <>
      <ListStatus list={list} act={props.act} />
      {list.data && (
        <>
          <Table headings={props.headings} actions={props.actions}>
            {list.data.items.map(props.row)}
            {!list.data.items.length && <EmptyRow cols={props.headings.length + (props.actions ? 1 : 0)} text={props.empty} />}
          </Table>
          <Pager page={props.page} size={props.size} total={list.data.total} onPage={props.onPage} />
        </>
      )}
    </>
  );
}
