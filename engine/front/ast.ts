/**
 * The syntax tree of a script: readonly tagged unions from one closed list. Code that handles
 * every kind switches on `kind` and lets the compiler check exhaustiveness (see `assertNever`).
 */

import type { Value } from "../values/values.ts";

/** A string literal as written: its opening quote's length and the text up to the closing one. */
export interface Quoted {
  readonly fence: 1 | 3;
  readonly source: string;
}

/** Where a node starts in the script: 1-based line and column, 0-based offset. */
export interface Span {
  readonly line: number;
  readonly column: number;
  readonly offset: number;
}

// ---------------------------------------------------------------------------------------------
// Expressions

export type BinaryOp =
  | "+"
  | "-"
  | "*"
  | "/"
  | "%"
  | "="
  | "!="
  | "<"
  | "<="
  | ">"
  | ">="
  | "and"
  | "or"
  | "like"
  | "~";

export type Expr =
  /** A literal: number, string, boolean, null, IPv4 address or network, interval. */
  | {
    readonly kind: "literal";
    readonly value: Value;
    readonly span: Span;
    /** For numbers: the declared type (`42` INTEGER, `42L` or a 64-bit value LONG, `3.5` DOUBLE). */
    readonly numberKind?: "INTEGER" | "LONG" | "DOUBLE" | undefined;
    /** For strings: as written (lexer.ts placeInString finds a character of the value). */
    readonly quoted?: Quoted | undefined;
  }
  /** A field of the current record; `name` is unquoted (backquotes removed). */
  | { readonly kind: "field"; readonly name: string; readonly span: Span }
  /** A position key `@1` (1-based), allowed in group and sort. */
  | { readonly kind: "position"; readonly index: number; readonly span: Span }
  /** `$name`: a constant or an argument. */
  | { readonly kind: "param"; readonly name: string; readonly span: Span }
  /** `*` in `count(*)` and `select(*)`. */
  | { readonly kind: "star"; readonly span: Span }
  /** A function call; `name` as written (function names are case-insensitive). */
  | {
    readonly kind: "call";
    readonly name: string;
    readonly args: readonly Expr[];
    readonly span: Span;
  }
  | {
    readonly kind: "unary";
    readonly op: "-" | "not";
    readonly operand: Expr;
    readonly span: Span;
  }
  | {
    readonly kind: "binary";
    readonly op: BinaryOp;
    readonly left: Expr;
    readonly right: Expr;
    readonly span: Span;
  }
  /** `x in (a, b, c)` (list) or `ip in 10.0.0.0/8` / `ip in $net` (one expression, no parens). */
  | {
    readonly kind: "in";
    readonly operand: Expr;
    readonly list: readonly Expr[];
    readonly isList: boolean;
    readonly negated: boolean;
    readonly span: Span;
  }
  | {
    readonly kind: "isNull";
    readonly operand: Expr;
    readonly negated: boolean;
    readonly span: Span;
  }
  /** `a.b`: a tuple field; also `left.a` / `right.b` in join conditions. */
  | { readonly kind: "member"; readonly object: Expr; readonly name: string; readonly span: Span }
  /** `a[0]`: an array element (0-based). */
  | { readonly kind: "index"; readonly object: Expr; readonly index: Expr; readonly span: Span }
  /** `(a: 1, b: 'x')`: a tuple constructor, as in VALUES. */
  | {
    readonly kind: "tuple";
    readonly fields: readonly NamedExpr[];
    readonly span: Span;
  };

export interface NamedExpr {
  readonly name: string;
  readonly value: Expr;
  readonly span: Span;
}

// ---------------------------------------------------------------------------------------------
// Sources: the first element of a pipeline

export type Source =
  /** `@name`: a stream bound earlier. */
  | { readonly kind: "streamRef"; readonly name: string; readonly span: Span }
  /**
   * `@[path]` (a stored table) or `@[path](arg: literal, ...)` (a stored script); `args` is
   * null when there are no parentheses.
   */
  | {
    readonly kind: "stored";
    readonly path: string;
    readonly args: readonly NamedExpr[] | null;
    readonly span: Span;
  }
  /** `LIST(...)`, `PARSE(...)`, `READ_JSON(...)`, `READ_CSV(...)`: named arguments. */
  | {
    readonly kind: "sourceCall";
    readonly name: string;
    readonly args: readonly NamedExpr[];
    readonly span: Span;
  }
  /** `VALUES((a: 1), (a: 2))`: each row a tuple expression. */
  | { readonly kind: "values"; readonly rows: readonly Expr[]; readonly span: Span };

// ---------------------------------------------------------------------------------------------
// Commands: the steps after `|`

export interface SelectItem {
  readonly expr: Expr;
  readonly alias: string | null;
  readonly span: Span;
  /** `e.*`: the fields of the tuple field `expr`, each a column of its own name. */
  readonly spread?: boolean;
}

export interface SortKey {
  readonly expr: Expr;
  readonly descending: boolean;
}

export type Command =
  | { readonly kind: "select"; readonly items: readonly SelectItem[]; readonly span: Span }
  | { readonly kind: "group"; readonly keys: readonly Expr[]; readonly span: Span }
  /** `filter(cond)`; `negated` for `filter_out(cond)`. */
  | {
    readonly kind: "filter";
    readonly condition: Expr;
    readonly negated: boolean;
    readonly span: Span;
  }
  | { readonly kind: "sort"; readonly keys: readonly SortKey[]; readonly span: Span }
  | {
    readonly kind: "limit";
    readonly count: Expr;
    readonly offset: Expr | null;
    readonly span: Span;
  }
  /** `join(@other on left.a = right.b)`; `leftjoin(...)` has `outer: true`. */
  | {
    readonly kind: "join";
    readonly right: Source;
    readonly on: Expr;
    readonly outer: boolean;
    readonly span: Span;
  }
  | { readonly kind: "union"; readonly sources: readonly Source[]; readonly span: Span }
  | {
    readonly kind: "unnest";
    readonly field: Expr;
    readonly alias: string | null;
    /** `leftunnest`: a row whose array is null or empty is kept, with the element null. */
    readonly outer?: boolean;
    readonly span: Span;
  }
  | { readonly kind: "save"; readonly path: Expr; readonly span: Span }
  /**
   * `window(expr as name, ..., by: key, ..., order: key [desc], ...)`: each row keeps its fields
   * and gets the items, computed over the rows of its `by` group in the `order`.
   */
  | {
    readonly kind: "window";
    readonly items: readonly SelectItem[];
    readonly by: readonly Expr[];
    readonly order: readonly SortKey[];
    readonly span: Span;
  };

export interface Pipeline {
  readonly source: Source;
  readonly commands: readonly Command[];
  readonly span: Span;
}

// ---------------------------------------------------------------------------------------------
// Statements and scripts

/** An `init` parameter: mandatory (`name::TYPE`) or optional with a literal default. */
export type Param =
  | {
    readonly kind: "mandatory";
    readonly name: string;
    readonly typeName: string;
    readonly span: Span;
  }
  | {
    readonly kind: "optional";
    readonly name: string;
    readonly defaultValue: Expr;
    readonly span: Span;
  };

export type Statement =
  | { readonly kind: "init"; readonly params: readonly Param[]; readonly span: Span }
  /** `$name = expr;` */
  | { readonly kind: "let"; readonly name: string; readonly value: Expr; readonly span: Span }
  /** `@name = pipeline;` */
  | {
    readonly kind: "bind";
    readonly name: string;
    readonly pipeline: Pipeline;
    readonly span: Span;
  }
  /** A pipeline on its own; the last pipeline statement (bound or not) is the result. */
  | { readonly kind: "pipeline"; readonly pipeline: Pipeline; readonly span: Span };

export interface Script {
  readonly statements: readonly Statement[];
}

/** For exhaustive switches: `default: return assertNever(node)`. */
export function assertNever(x: never): never {
  throw new Error(`unhandled node ${JSON.stringify(x)}`);
}
