// A small JavaScript editor: a textarea over a highlighted copy of its text. The tokenizer is
// hand-written (keywords, strings, template strings, numbers, comments, regular expressions);
// Tab and Shift+Tab indent and outdent with two spaces, Escape leaves the field so keyboard
// users are never trapped in it.
import { useRef } from "preact/hooks";
import type { ComponentChildren } from "preact";

export type TokenKind = "kw" | "str" | "num" | "com" | "re" | "lit" | "txt";
export interface Token {
  kind: TokenKind;
  text: string;
}

const KEYWORDS = new Set(
  ("async await break case catch class const continue debugger default delete do else export extends finally for " +
    "function if import in instanceof let new of return static super switch this throw try typeof var void while with yield").split(" "),
);
const LITERALS = new Set(["true", "false", "null", "undefined", "NaN", "Infinity"]);

/** tokenize splits JavaScript source into highlighted runs; joined, the runs are the source. */
export function tokenize(src: string): Token[] {
  const out: Token[] = [];
  const push = (kind: TokenKind, text: string) => {
    const last = out[out.length - 1];
    if (last && last.kind === kind && kind === "txt") last.text += text;
    else out.push({ kind, text });
  };
  // After these (ignoring blanks) a "/" starts a regular expression, not a division.
  let regexOK = true;
  let i = 0;
  const n = src.length;
  while (i < n) {
    const c = src[i]!;
    const rest2 = src.slice(i, i + 2);
    if (rest2 === "//") {
      const end = src.indexOf("\n", i);
      const j = end < 0 ? n : end;
      push("com", src.slice(i, j));
      i = j;
      continue;
    }
    if (rest2 === "/*") {
      const end = src.indexOf("*/", i + 2);
      const j = end < 0 ? n : end + 2;
      push("com", src.slice(i, j));
      i = j;
      continue;
    }
    if (c === '"' || c === "'" || c === "`") {
      let j = i + 1;
      while (j < n && src[j] !== c) {
        if (src[j] === "\\") j++;
        else if (c !== "`" && src[j] === "\n") break;
        j++;
      }
      j = Math.min(n, j + 1);
      push("str", src.slice(i, j));
      i = j;
      regexOK = false;
      continue;
    }
    if (/[0-9]/.test(c) || (c === "." && /[0-9]/.test(src[i + 1] ?? ""))) {
      const m = /^(0[xX][0-9a-fA-F_]+|0[bB][01_]+|0[oO][0-7_]+|(\d[\d_]*)?\.?\d[\d_]*([eE][+-]?\d+)?)n?/.exec(src.slice(i));
      const text = m?.[0] || c;
      push("num", text);
      i += text.length;
      regexOK = false;
      continue;
    }
    if (/[A-Za-z_$]/.test(c)) {
      const m = /^[A-Za-z0-9_$]+/.exec(src.slice(i))!;
      const w = m[0];
      const kw = KEYWORDS.has(w);
      push(kw ? "kw" : LITERALS.has(w) ? "lit" : "txt", w);
      i += w.length;
      regexOK = kw && w !== "this" && w !== "super";
      continue;
    }
    if (c === "/" && regexOK) {
      let j = i + 1;
      let cls = false;
      while (j < n && src[j] !== "\n") {
        const d = src[j];
        if (d === "\\") j++;
        else if (d === "[") cls = true;
        else if (d === "]") cls = false;
        else if (d === "/" && !cls) break;
        j++;
      }
      if (j < n && src[j] === "/") {
        j++;
        while (j < n && /[a-z]/.test(src[j]!)) j++;
        push("re", src.slice(i, j));
        i = j;
        regexOK = false;
        continue;
      }
    }
    push("txt", c);
    if (!/\s/.test(c)) regexOK = !/[)\]}]/.test(c);
    i++;
  }
  return out;
}

const INDENT = "  ";

/** indent applies Tab (or Shift+Tab) to the selection [start, end) of text. */
export function indent(text: string, start: number, end: number, outdent: boolean): { text: string; start: number; end: number } {
  const lineStart = text.lastIndexOf("\n", start - 1) + 1;
  if (!outdent && start === end) {
    return { text: text.slice(0, start) + INDENT + text.slice(end), start: start + INDENT.length, end: start + INDENT.length };
  }
  const block = text.slice(lineStart, end);
  const lines = block.split("\n");
  let first = 0;
  let total = 0;
  const changed = lines.map((l, k) => {
    if (outdent) {
      const cut = l.startsWith(INDENT) ? INDENT.length : l.startsWith(" ") ? 1 : 0;
      if (k === 0) first = -cut;
      total -= cut;
      return l.slice(cut);
    }
    if (k === 0) first = INDENT.length;
    total += INDENT.length;
    return INDENT + l;
  });
  return {
    text: text.slice(0, lineStart) + changed.join("\n") + text.slice(end),
    start: Math.max(lineStart, start + first),
    end: end + total,
  };
}

/** CodeEditor edits JavaScript with highlighting; its label is the field's label. */
export function CodeEditor(props: {
  id?: string;
  value: string;
  onInput: (v: string) => void;
  rows?: number;
  label?: string;
  "aria-describedby"?: string;
}) {
  const pre = useRef<HTMLPreElement>(null);
  const onKey = (e: KeyboardEvent) => {
    const ta = e.currentTarget as HTMLTextAreaElement;
    if (e.key === "Tab" && !e.ctrlKey && !e.altKey && !e.metaKey) {
      if (ta.dataset.escaped === "1") return; // after Escape, Tab moves focus on
      e.preventDefault();
      const r = indent(ta.value, ta.selectionStart, ta.selectionEnd, e.shiftKey);
      ta.value = r.text;
      ta.setSelectionRange(r.start, r.end);
      props.onInput(r.text);
    } else if (e.key === "Escape") {
      ta.dataset.escaped = "1";
      e.stopPropagation();
      e.preventDefault();
    } else {
      delete ta.dataset.escaped;
    }
  };
  const sync = (e: Event) => {
    const ta = e.currentTarget as HTMLTextAreaElement;
    if (pre.current) {
      pre.current.scrollTop = ta.scrollTop;
      pre.current.scrollLeft = ta.scrollLeft;
    }
  };
  const lines = props.rows ?? 12;
  return (
    <div class="code-editor" style={{ "--rows": String(lines) }}>
      <pre ref={pre} aria-hidden="true" class="code-hl">
        <Highlighted src={props.value} />
        {"\n"}
      </pre>
      <textarea
        id={props.id}
        aria-label={props.label}
        aria-describedby={props["aria-describedby"]}
        class="code-input"
        spellcheck={false}
        autocapitalize="off"
        autocomplete="off"
        wrap="off"
        value={props.value}
        onInput={(e) => {
          props.onInput(e.currentTarget.value);
          sync(e);
        }}
        onScroll={sync}
        onKeyDown={onKey}
      />
    </div>
  );
}

/** Highlighted renders source as coloured spans (also used for read-only code). */
export function Highlighted({ src }: { src: string }): ComponentChildren {
  return tokenize(src).map((tok, k) => (tok.kind === "txt" ? tok.text : <span key={k} class={`tk-${tok.kind}`}>{tok.text}</span>));
}
