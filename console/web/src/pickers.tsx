// Pickers for the people and groups a form or a flow names by id: users, roles, departments.
// Each is a combobox (ARIA 1.2 pattern): type to search the server, ↑/↓ to move, Enter to
// choose, Escape to close, Backspace on an empty box to drop the last choice. What is chosen
// shows as chips with a remove button; the value is always ids.
//
//   <UserPicker value={id} onChange={setId} />                  one user id ("" = none)
//   <RolePicker multiple value={ids} onChange={setIds} />       several role ids
//   <DepartmentPicker multiple value={ids} onChange={setIds} />
//
// Props (PickerProps): value and onChange (a string, or with multiple a string[]), multiple,
// id and aria-describedby (so <Field> labels the text box), label (the aria-label when no
// <Field> labels it), placeholder, disabled.
//
// Sources: users come from security/user/find_page (keyword = name or user name), roles from
// security/user/list_roles, departments from security/department/find_tree (svc's own; the
// built-in departments `svc dept` manages). Whenever a search is not allowed or finds nothing,
// the text typed can still be taken as an id ("Use the id …"), so a caller without the query
// permission, or a server whose approval asks a host's organisation (find_tree then answers
// 404), can still name a user or a department by id.
import { useEffect, useId, useMemo, useRef, useState } from "preact/hooks";
import { call } from "./api";
import { t } from "./i18n";
import { P } from "./perms";
import { can } from "./session";
import "./pickers.css";

/** PickOption is one entry a picker offers: the id it returns, what it shows, a second line. */
export interface PickOption {
  id: string;
  label: string;
  hint?: string;
}

/** PickerSource is where a picker's options come from. */
export interface PickerSource {
  /** search answers the options matching q (q may be empty: the first few). */
  search(q: string, signal: AbortSignal): Promise<PickOption[]>;
  /** label answers what to show for an id chosen earlier (undefined: show the id). */
  label?(id: string): Promise<string | undefined>;
}

interface Common {
  id?: string;
  "aria-describedby"?: string;
  label?: string;
  placeholder?: string;
  disabled?: boolean;
}

/** PickerProps: a single picker's value is one id ("" = none), a multiple one's a list. */
export type PickerProps = Common &
  ({ multiple?: false; value: string; onChange: (id: string) => void } | { multiple: true; value: string[]; onChange: (ids: string[]) => void });

const labels = new Map<string, string>(); // "source:id" → label, shared by every picker

/** Picker is the combobox every picker below is; source says where its options come from. */
export function Picker(props: PickerProps & { source: PickerSource; kind: string }) {
  const { source, kind } = props;
  const ids = props.multiple ? props.value : props.value ? [props.value] : [];
  const [text, setText] = useState("");
  const [open, setOpen] = useState(false);
  const [found, setFound] = useState<PickOption[]>([]);
  const [searched, setSearched] = useState<string | null>(null); // the text found answers
  const [active, setActive] = useState(0);
  const [, redraw] = useState(0);
  const input = useRef<HTMLInputElement>(null);
  const listId = useId();
  const ownId = useId();
  const inputId = props.id ?? ownId;

  // Names of ids chosen before this picker knew them.
  useEffect(() => {
    if (!source.label) return;
    let live = true;
    for (const id of ids) {
      if (labels.has(`${kind}:${id}`)) continue;
      source.label(id).then(
        (l) => {
          if (l && live) {
            labels.set(`${kind}:${id}`, l);
            redraw((n) => n + 1);
          }
        },
        () => undefined,
      );
    }
    return () => {
      live = false;
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [ids.join("\u0000")]);

  // Search as the text changes (a short pause first), only while the list is open.
  useEffect(() => {
    if (!open) return;
    const ctl = new AbortController();
    const timer = setTimeout(() => {
      source.search(text.trim(), ctl.signal).then(
        (opts) => {
          if (ctl.signal.aborted) return;
          opts.forEach((o) => labels.set(`${kind}:${o.id}`, o.label));
          setFound(opts);
          setSearched(text.trim());
          setActive(0);
        },
        () => {
          if (ctl.signal.aborted) return;
          setFound([]);
          setSearched(text.trim());
        },
      );
    }, 200);
    return () => {
      clearTimeout(timer);
      ctl.abort();
    };
  }, [text, open, source, kind]);

  const typed = text.trim();
  const options = useMemo(() => {
    if (searched !== typed) return []; // a search under way: no stale answer to choose
    const list = found.filter((o) => !ids.includes(o.id));
    // The text typed as an id, once the search for it has answered (Enter earlier would take
    // the text instead of the person it names).
    if (typed && !found.some((o) => o.id === typed) && !ids.includes(typed)) list.push({ id: typed, label: t("Use the id “{id}”", { id: typed }) });
    return list;
  }, [found, typed, searched, ids]);

  const set = (next: string[]) => {
    if (props.multiple) props.onChange(next);
    else props.onChange(next[next.length - 1] ?? "");
  };
  const choose = (o: PickOption) => {
    set(props.multiple ? [...ids, o.id] : [o.id]);
    setText("");
    setOpen(false);
    input.current?.focus();
  };
  const remove = (id: string) => {
    set(ids.filter((x) => x !== id));
    input.current?.focus();
  };
  const onKey = (e: KeyboardEvent) => {
    if (e.key === "ArrowDown" || e.key === "ArrowUp") {
      e.preventDefault();
      if (!open) return setOpen(true);
      const n = options.length;
      if (n) setActive((a) => (a + (e.key === "ArrowDown" ? 1 : n - 1)) % n);
    } else if (e.key === "Enter") {
      if (open && options[active]) {
        e.preventDefault();
        choose(options[active]);
      }
    } else if (e.key === "Escape") {
      if (open) {
        e.preventDefault();
        e.stopPropagation(); // a dialog around the picker stays open
        setOpen(false);
      }
    } else if (e.key === "Backspace" && !text && ids.length) {
      remove(ids[ids.length - 1]);
    }
  };
  const shown = open && options.length > 0;
  const optId = (i: number) => `${listId}-${i}`;

  return (
    <div class="picker">
      {ids.length > 0 && (
        <ul class="picker-chips" aria-label={t("Chosen")}>
          {ids.map((id) => {
            const name = labels.get(`${kind}:${id}`) ?? id;
            return (
              <li key={id} class="chip">
                <span title={id}>{name}</span>
                <button type="button" disabled={props.disabled} aria-label={t("Remove {name}", { name })} onClick={() => remove(id)}>
                  ×
                </button>
              </li>
            );
          })}
        </ul>
      )}
      <input
        ref={input}
        id={inputId}
        role="combobox"
        aria-label={props.label}
        aria-describedby={props["aria-describedby"]}
        aria-expanded={shown}
        aria-controls={listId}
        aria-autocomplete="list"
        aria-activedescendant={shown ? optId(active) : undefined}
        autocomplete="off"
        disabled={props.disabled}
        placeholder={props.placeholder ?? (props.multiple || !ids.length ? t("Search…") : t("Search to change…"))}
        value={text}
        onInput={(e) => {
          setText(e.currentTarget.value);
          setOpen(true);
        }}
        onFocus={() => setOpen(true)}
        onBlur={() => setTimeout(() => setOpen(false), 150)}
        onKeyDown={onKey}
      />
      <ul id={listId} role="listbox" class={shown ? "picker-list" : "picker-list hidden"} aria-label={props.label ?? t("Options")}>
        {shown &&
          options.map((o, i) => (
            <li
              key={o.id}
              id={optId(i)}
              role="option"
              aria-selected={i === active}
              onMouseDown={(e) => e.preventDefault()}
              onClick={() => choose(o)}
              onMouseEnter={() => setActive(i)}
            >
              <span>{o.label}</span>
              {o.hint && <small class="muted">{o.hint}</small>}
            </li>
          ))}
      </ul>
    </div>
  );
}

/** userSource searches security/user/find_page by name or user name; each option is a user's
 * display name (user name and id below) and returns the user's id. */
export const userSource: PickerSource = {
  async search(q, signal) {
    const page = await call("security/user/find_page", { keyword: q || undefined }, { meta: { page: 1, size: 10 }, signal });
    return page.items.map((u) => ({ id: u.id, label: u.displayName || u.username, hint: `${u.username} · ${u.id}` }));
  },
  async label(id) {
    const u = await call("security/user/get", { id });
    return u.displayName || u.username;
  },
};

let roleList: Promise<string[]> | null = null;

/** roleSource offers the roles security/user/list_roles names (fetched once per page load),
 * those containing the text typed. A role's id is its name. */
export const roleSource: PickerSource = {
  async search(q) {
    roleList ??= call("security/user/list_roles").then(
      (rs) => rs.map((r) => r.name),
      (e) => {
        roleList = null;
        throw e;
      },
    );
    const all = await roleList;
    const low = q.toLowerCase();
    return all.filter((n) => n.toLowerCase().includes(low)).map((n) => ({ id: n, label: n }));
  },
};

let deptList: Promise<PickOption[]> | null = null;

/** departments answers every department of security/department/find_tree (fetched once per page
 * load) as options: the name, the path above it and the code below. */
function departments() {
  deptList ??= call("security/department/find_tree", {}).then(
    (tree) => {
      const out: PickOption[] = [];
      const walk = (nodes: typeof tree, path: string) =>
        nodes.forEach((d) => {
          out.push({ id: d.id, label: d.name, hint: path ? `${path} · ${d.code}` : d.code });
          walk(d.children ?? [], path ? `${path} / ${d.name}` : d.name);
        });
      walk(tree, "");
      return out;
    },
    (e) => {
      deptList = null;
      throw e;
    },
  );
  return deptList;
}

/** departmentSource offers the departments whose name, code or path contains the text typed
 * (the first 50); a department's id is what a flow names. Without security.department.query it
 * asks nothing and offers none: the picker takes the id typed. */
export const departmentSource: PickerSource = {
  async search(q) {
    if (!can(P.departmentQuery)) return [];
    const low = q.toLowerCase();
    const all = await departments();
    return all.filter((d) => `${d.label}\u0000${d.hint}`.toLowerCase().includes(low)).slice(0, 50);
  },
  async label(id) {
    return can(P.departmentQuery) ? (await departments()).find((d) => d.id === id)?.label : undefined;
  },
};

/** UserPicker picks users (their ids) by name or user name. */
export function UserPicker(props: PickerProps) {
  return <Picker {...props} source={userSource} kind="user" />;
}

/** RolePicker picks roles (their names, which are their ids). */
export function RolePicker(props: PickerProps) {
  return <Picker {...props} source={roleSource} kind="role" />;
}

/** DepartmentPicker picks departments (their ids) by name or code. */
export function DepartmentPicker(props: PickerProps) {
  return <Picker {...props} source={departmentSource} kind="department" placeholder={props.placeholder ?? t("Search departments by name or code…")} />;
}
