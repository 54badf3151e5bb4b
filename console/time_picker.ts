/**
 * The time range a script reads: quick choices (the last 15 minutes ... 30 days), a relative one
 * (the last N minutes, hours or days) and an absolute one (from, to). Before each run it is
 * written into the script (console/refine.ts): `from:` and `to:` on every PARSE, LIST and
 * READ_JSON source (which skip files whose path time lies outside), and, when the last result
 * had a time field and the script gives events, one `| filter(t >= T(..) and t < T(..))` line.
 * A relative range is computed anew at each run; "Any time" takes out the bounds the picker wrote
 * (bounds written by hand stay).
 */

import { h } from "./dom.ts";

const MINUTE = 60_000;
const QUICK: readonly [string, string, number][] = [
  ["15m", "Last 15 minutes", 15 * MINUTE],
  ["1h", "Last hour", 60 * MINUTE],
  ["24h", "Last 24 hours", 24 * 60 * MINUTE],
  ["7d", "Last 7 days", 7 * 24 * 60 * MINUTE],
  ["30d", "Last 30 days", 30 * 24 * 60 * MINUTE],
];
const UNITS: Record<string, number> = { minutes: MINUTE, hours: 60 * MINUTE, days: 1440 * MINUTE };

export interface TimeRange {
  readonly from: Date | null;
  readonly to: Date | null;
  /** What the picker shows, for messages. */
  readonly label: string;
}

/** A `datetime-local` value (the browser's zone) for a date, to the minute. */
function localInput(d: Date): string {
  const p = (n: number) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${
    p(d.getMinutes())
  }:${p(d.getSeconds())}`;
}

export function timePicker(options: { readonly now?: () => number } = {}) {
  const now = options.now ?? Date.now;
  const choice = h(
    "select",
    { id: "time-range", "aria-describedby": "time-range-note" },
    h("option", { value: "any" }, "Any time"),
    ...QUICK.map(([v, label]) => h("option", { value: v }, label)),
    h("option", { value: "relative" }, "Last …"),
    h("option", { value: "absolute" }, "Between …"),
  );
  const amount = h("input", { id: "time-amount", type: "number", min: 1, value: "2", size: 4 });
  const unit = h(
    "select",
    { id: "time-unit", "aria-label": "Unit" },
    ...Object.keys(UNITS).map((u) => h("option", { value: u }, u)),
  );
  const fromInput = h("input", { id: "time-from", type: "datetime-local", step: 1 });
  const toInput = h("input", { id: "time-to", type: "datetime-local", step: 1 });
  const relative = h(
    "span",
    { className: "time-relative", hidden: true },
    h("label", { htmlFor: "time-amount" }, "Last"),
    amount,
    unit,
  );
  const absolute = h(
    "span",
    { className: "time-absolute", hidden: true },
    h("label", { htmlFor: "time-from" }, "From"),
    fromInput,
    h("label", { htmlFor: "time-to" }, "To"),
    toInput,
  );
  const note = h("span", { id: "time-range-note", className: "hint" });
  const element = h(
    "div",
    { className: "time-picker", role: "group", "aria-label": "Time range" },
    h("label", { htmlFor: "time-range" }, "Time"),
    choice,
    relative,
    absolute,
    note,
  );
  const show = () => {
    relative.hidden = choice.value !== "relative";
    absolute.hidden = choice.value !== "absolute";
    if (choice.value === "absolute" && !fromInput.value) {
      fromInput.value = localInput(new Date(now() - 24 * 60 * MINUTE));
      toInput.value = localInput(new Date(now()));
    }
  };
  choice.addEventListener("change", show);
  return {
    element,
    /** The range chosen, computed now. */
    range(): TimeRange {
      const v = choice.value;
      const quick = QUICK.find(([q]) => q === v);
      if (quick) return { from: new Date(now() - quick[2]), to: new Date(now()), label: quick[1] };
      if (v === "relative") {
        const n = Math.max(1, Number(amount.value) || 1);
        return {
          from: new Date(now() - n * UNITS[unit.value]!),
          to: new Date(now()),
          label: `Last ${n} ${unit.value}`,
        };
      }
      if (v === "absolute") {
        const f = fromInput.value ? new Date(fromInput.value) : null;
        const t = toInput.value ? new Date(toInput.value) : null;
        return {
          from: f && !Number.isNaN(f.getTime()) ? f : null,
          to: t && !Number.isNaN(t.getTime()) ? t : null,
          label: "Between",
        };
      }
      return { from: null, to: null, label: "Any time" };
    },
    /** Sets an absolute range (a drag across the histogram). */
    setAbsolute(from: Date, to: Date) {
      choice.value = "absolute";
      fromInput.value = localInput(from);
      toInput.value = localInput(to);
      show();
    },
    /** Says what the last run's range was. */
    note(text: string) {
      note.textContent = text;
    },
  };
}
