// How the trace viewer writes its numbers: milliseconds, percentages and a bucket cap.

export const MS = { digits: 2, unit: "ms" };
export const PCT = { digits: 1, unit: "%" };
/** A number as Python's `{:g}` writes a cap (20, 20.5). */
export const plain = (v) => String(Number(v.toPrecision(6)));
