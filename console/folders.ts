/** Folders of the resource tree made from the console ("New folder", a save into a missing one). */

import { api, ApiFailure } from "./api.ts";

const encodePath = (path: string) => path.split("/").map(encodeURIComponent).join("/");

/**
 * Creates `folder` and any missing folder above it (`PUT /resources/<path>/`), from the top down;
 * one that is already there is passed over.
 */
export async function makeFolders(folder: string): Promise<void> {
  const parts = folder.split("/").filter((p) => p !== "");
  for (let i = 1; i <= parts.length; i++) {
    const path = "/" + parts.slice(0, i).join("/");
    try {
      await api(`/resources${encodePath(path)}/`, { method: "PUT" });
    } catch (e) {
      // A folder already there (or a top one nobody creates, like /user) is passed over; a
      // real refusal shows when the next level or the save fails.
      if (!(e instanceof ApiFailure && (e.status === 409 || e.status === 403))) throw e;
    }
  }
}
