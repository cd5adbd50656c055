import { MAX_ROW_RUNS, type RowPlaces } from "../blackboard/schemas.js";

/**
 * Builds a RowPlaces from each row's place (a file line, a sheet row), given in row order:
 * rows whose places follow one another share a run; after MAX_ROW_RUNS runs the rest are
 * counted but not placed (`known`).
 */
export class RowPlacesBuilder {
  private readonly runs: [number, number][] = [];
  private rows = 0;
  private last = 0;
  private known: number | undefined;

  constructor(private readonly maxRuns = MAX_ROW_RUNS) {}

  /** The place of the next row. */
  push(at: number): void {
    const row = this.rows++;
    if (this.known !== undefined) return;
    if (row === 0 || at !== this.last + 1) {
      if (this.runs.length === this.maxRuns) {
        this.known = row;
        return;
      }
      this.runs.push([row, at]);
    }
    this.last = at;
  }

  /** How many rows were pushed. */
  get count(): number {
    return this.rows;
  }

  places(): RowPlaces {
    return this.known === undefined
      ? { runs: [...this.runs] }
      : { runs: [...this.runs], known: this.known };
  }
}

/** RowPlaces of rows at these places, in row order. */
export function rowPlaces(places: Iterable<number>, maxRuns = MAX_ROW_RUNS): RowPlaces {
  const builder = new RowPlacesBuilder(maxRuns);
  for (const at of places) builder.push(at);
  return builder.places();
}

/** Where row `row` lies (1-based line or sheet row); null when it has no recorded place. */
export function placeOf(places: RowPlaces, row: number): number | null {
  if (!Number.isInteger(row) || row < 0) return null;
  if (places.known !== undefined && row >= places.known) return null;
  const { runs } = places;
  let lo = 0;
  let hi = runs.length - 1;
  let found: [number, number] | undefined;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const run = runs[mid] as [number, number];
    if (run[0] <= row) {
      found = run;
      lo = mid + 1;
    } else {
      hi = mid - 1;
    }
  }
  return found ? found[1] + (row - found[0]) : null;
}
