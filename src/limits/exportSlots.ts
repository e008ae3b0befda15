/**
 * How many user exports this thread runs at once (its share of EXPORTS_PER_INSTANCE, docs/api.md §16):
 * each holds a connection of the export pool for as long as its client reads, so one past the count
 * is refused at once (429) instead of waiting on a connection a slow reader may hold for a minute.
 */
export class ExportSlots {
  #taken = 0;

  constructor(readonly size: number) {}

  /** A slot and the function that gives it back (once), or null when every slot is taken. */
  take(): (() => void) | null {
    if (this.#taken >= this.size) return null;
    this.#taken++;
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      this.#taken--;
    };
  }
}
