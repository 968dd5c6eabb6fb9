import { describe, expect, it } from "vitest";
import { indent, tokenize, type TokenKind } from "./code";

/** kinds renders the non-blank runs as "kind:text". */
const kinds = (src: string) =>
  tokenize(src)
    .filter((t) => t.text.trim())
    .map((t) => `${t.kind}:${t.text.trim()}`);

describe("tokenize", () => {
  it.each([
    "const x = a / b / c; // done",
    "return /a[/]b\\/c/gi.test(s)",
    "`multi\nline ${x}` + 'it\\'s' + \"q\"",
    "/* open comment",
    "x = 0x1F + 1_000n + .5e-3",
    "'unterminated\nnext",
  ])("gives back the source when joined: %j", (src) => {
    expect(
      tokenize(src)
        .map((t) => t.text)
        .join(""),
    ).toBe(src);
  });

  it("tells keywords, literals, numbers, strings and comments apart", () => {
    expect(kinds("if (x === null) return 'a' + 42; // note")).toEqual([
      "kw:if",
      "txt:(x ===", // adjacent plain runs are one
      "lit:null",
      "txt:)",
      "kw:return",
      "str:'a'",
      "txt:+",
      "num:42",
      "txt:;",
      "com:// note",
    ]);
  });

  it("reads a slash as division after a value and as a regular expression elsewhere", () => {
    const division = tokenize("a / b / c").map((t) => t.kind);
    expect(division).not.toContain<TokenKind>("re");
    expect(kinds("x = /ab+c/i")).toContain("re:/ab+c/i");
    expect(kinds("return /[/]/.source")).toContain("re:/[/]/");
    expect(kinds("f(x) / 2")).not.toContain("re:/ 2");
  });

  it("keeps escaped quotes inside a string and stops a plain string at a line end", () => {
    expect(kinds("'it\\'s'")).toEqual(["str:'it\\'s'"]);
    expect(kinds("'open\nx")).toEqual(["str:'open", "txt:x"]);
    expect(kinds("`a\nb`")).toEqual(["str:`a\nb`"]);
  });
});

describe("indent", () => {
  it("indents and outdents every selected line by two spaces", () => {
    const text = "a\nb\nc";
    const r = indent(text, 0, text.length, false);
    expect(r.text).toBe("  a\n  b\n  c");
    expect(indent(r.text, 0, r.text.length, true).text).toBe(text);
  });
});
