/**
 * The stored cloud hours a schedule reads (actors/scheduler.ts `CloudHours`): each `cloudapi://`
 * source of the schedule, opened as its user (rights, licence and the store's ACL apply), tells
 * the fetch state of its hours without fetching anything (connectors/cloudapi
 * `CloudApiStore.hourStates`).
 */

import type { DatastoreRegistry, User } from "../engine/mod.ts";
import { hasHourStates } from "../connectors/cloudapi/cloudapi_datastore.ts";
import type { CloudHour, CloudHours, Schedule } from "./scheduler.ts";

export interface CloudHoursDeps {
  readonly datastores: DatastoreRegistry;
  readonly user: (name: string) => Promise<User | undefined>;
  /** The `cloudapi://` URIs the schedule reads. */
  readonly uris: (schedule: Schedule) => Promise<readonly string[]>;
}

export function cloudHoursOf(deps: CloudHoursDeps): CloudHours {
  return async (schedule, from, to) => {
    const uris = await deps.uris(schedule);
    if (uris.length === 0) return [];
    const user = await deps.user(schedule.runAs);
    if (!user) throw new Error(`user '${schedule.runAs}' does not exist`);
    const byKey = new Map<string, CloudHour>();
    for (const uri of uris) {
      const store = await deps.datastores.forUri(uri, user);
      if (!hasHourStates(store)) continue;
      for (const h of await store.hourStates(uri, from, to)) byKey.set(h.key, h);
    }
    return [...byKey.values()];
  };
}
