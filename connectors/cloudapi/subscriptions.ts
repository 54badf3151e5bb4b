/**
 * What the process knows of Management Activity API subscriptions, per store, tenant and
 * content type: which were seen enabled (no need to list or start them again) and when a
 * start was last requested (Microsoft asks for 15 minutes between start requests). Built once
 * in main.ts and shared by every query.
 */

/** Microsoft's minimum time between two start requests of one content type. */
export const START_INTERVAL_MS = 15 * 60_000;

export class SubscriptionMemory {
  #enabled = new Set<string>();
  #started = new Map<string, { at: number; failure?: string | undefined }>();

  /** Was the subscription seen enabled? */
  enabled(key: string): boolean {
    return this.#enabled.has(key);
  }

  /** The subscription is enabled (listed so, started, or AF20024). */
  remember(key: string): void {
    this.#enabled.add(key);
  }

  /** The subscription is gone (AF20022): list it again next time. */
  forget(key: string): void {
    this.#enabled.delete(key);
  }

  /** The last start request: when (epoch ms), and why it failed if it did; or undefined. */
  lastStart(key: string): { at: number; failure?: string | undefined } | undefined {
    return this.#started.get(key);
  }

  /** A start request was sent at `at`; `failure` says why it failed, when it did. */
  started(key: string, at: number, failure?: string): void {
    this.#started.set(key, { at, failure });
  }
}

/** The memory key of a store's subscription to a content type. */
export function subscriptionKey(store: string, tenant: string, contentType: string): string {
  return `${store}|${tenant.toLowerCase()}|${contentType}`;
}
