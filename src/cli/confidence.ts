import { loadConfig } from "../config.ts";
import { backfillConfidence } from "../store/confidenceBackfill.ts";
import { type CommandGroup, parseArguments } from "./command.ts";

/** `confidence backfill`: match confidence for what no batch has computed (docs/operations.md). */
export const confidence: CommandGroup = {
  name: "confidence",
  subcommands: {
    backfill: {
      usage: "[--all]",
      summary:
        "Compute match confidence for kept items and history rows that have none (after the upgrade that added it); --all places every item again against the catalog and with the formula as they are now",
      async run(args, context) {
        const { values } = parseArguments(
          args,
          { all: { type: "boolean", default: false } },
          { min: 0, max: 0 },
        );
        const settings = loadConfig().match;
        let reported = 0;
        const counts = await context.withStore((store) =>
          backfillConfidence(store, settings, {
            replace: values.all === true,
            progress(done, total) {
              if (done - reported >= 1000 || done === total) {
                reported = done;
                context.err(`  ${done} of ${total} users`);
              }
            },
          }),
        );
        context.out(
          `confidence: ${counts.users} users, ${counts.items} items placed, ${counts.events} history rows scored`,
        );
      },
    },
  },
};
