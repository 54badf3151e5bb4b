/**
 * What to run: a script text, a stored script (view) by virtual path, or the rows of a stored
 * table by virtual path (as `@[path]` would read them, with the path taken as data, never as text).
 */
export type ScriptSource =
  | { readonly text: string }
  | { readonly path: string }
  | { readonly table: string };
