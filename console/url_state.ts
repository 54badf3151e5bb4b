/**
 * What the console's address says, so that Back/Forward, a reload and a copied link bring the
 * same view back: the tab, the open script's path (or, for an unsaved script, its text when it
 * is short), and the query followed, in the fragment
 * (`/#tab=editor&path=%2Fuser%2Fa.sx&query=<id>`): a fragment is never sent to the server, and
 * the token is never in it. A draft of the editor's text is kept in localStorage per user and
 * path until it is saved.
 */

export interface UrlState {
  readonly tab: string;
  /** The stored script open in the editor. */
  readonly path?: string | undefined;
  /** An unsaved script's text (only without `path`, only when short). */
  readonly script?: string | undefined;
  readonly query?: string | undefined;
}

/** Longer unsaved scripts stay out of the address (the draft keeps them). */
export const MAX_URL_SCRIPT = 2000;

export function parseUrlState(hash: string): UrlState {
  const p = new URLSearchParams(hash.replace(/^#/, ""));
  const get = (k: string) => p.get(k) ?? undefined;
  return {
    tab: get("tab") ?? "editor",
    path: get("path"),
    script: get("script"),
    query: get("query"),
  };
}

export function formatUrlState(s: UrlState): string {
  const p = new URLSearchParams({ tab: s.tab });
  if (s.path) p.set("path", s.path);
  else if (s.script !== undefined && s.script.length <= MAX_URL_SCRIPT) p.set("script", s.script);
  if (s.query) p.set("query", s.query);
  return "#" + p.toString();
}

export function sameUrlState(a: UrlState, b: UrlState): boolean {
  return formatUrlState(a) === formatUrlState(b);
}

/** The editor's unsaved text, per user and path ("" for a script not yet saved). */
export const drafts = {
  key: (user: string, path: string) => `trawl.draft.${user}.${path}`,
  get(user: string, path: string): string | null {
    try {
      return localStorage.getItem(drafts.key(user, path));
    } catch {
      return null;
    }
  },
  set(user: string, path: string, text: string): void {
    try {
      localStorage.setItem(drafts.key(user, path), text);
    } catch {
      // storage full or refused: the draft is a convenience
    }
  },
  clear(user: string, path: string): void {
    try {
      localStorage.removeItem(drafts.key(user, path));
    } catch {
      // as above
    }
  },
};
