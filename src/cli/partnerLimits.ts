import { type LimitOverrides, OVERRIDES_TTL_MS, setPartnerLimits } from "../limits/overrides.ts";
import {
  CommandError,
  integerOption,
  parseArguments,
  partnerIdArgument,
  type Subcommand,
  UsageError,
} from "./command.ts";

/** `partners limits`: a partner's own rate limits, replacing the RATE_LIMIT_* defaults for both its keys. */

const BUDGETS = ["ingest", "read", "write"] as const;

/** The same bounds the RATE_LIMIT_* variables accept (src/config.ts). */
const MAX_LIMIT = 1_000_000_000;

function describe(overrides: LimitOverrides): string {
  return BUDGETS.map((budget) => `${budget} ${overrides[budget] ?? "default"}`).join(", ");
}

export const partnerLimits: Subcommand = {
  usage: "<partner_id> [--ingest N] [--read N] [--write N] | --clear",
  summary: "set a partner's requests per window per budget; --clear returns to the RATE_LIMIT_* defaults",
  async run(args, context) {
    const { values, positionals } = parseArguments(
      args,
      {
        ingest: { type: "string" },
        read: { type: "string" },
        write: { type: "string" },
        clear: { type: "boolean" },
      },
      { min: 1, max: 1 },
    );
    const partnerId = partnerIdArgument(positionals[0]);
    const given = BUDGETS.filter((budget) => values[budget] !== undefined);
    if (values.clear && given.length > 0)
      throw new UsageError("--clear cannot be combined with budget options");
    if (!values.clear && given.length === 0)
      throw new UsageError("give --ingest, --read, --write, or --clear");
    const changes: Partial<LimitOverrides> = {};
    for (const budget of BUDGETS) {
      const value = values[budget];
      if (values.clear) changes[budget] = null;
      else if (value !== undefined) changes[budget] = integerOption(budget, value, 1, MAX_LIMIT);
    }
    const updated = await context.withStore((store) => setPartnerLimits(store, partnerId, changes));
    if (updated === null) {
      throw new CommandError(
        `no partner ${partnerId} (create it with: bun run cli partners create ${partnerId})`,
      );
    }
    context.out(`Rate limits of ${partnerId} per window: ${describe(updated)}.`);
    context.out(
      `"default" follows RATE_LIMIT_INGEST/READ/WRITE. Running servers apply this within ${OVERRIDES_TTL_MS / 1000} s.`,
    );
  },
};
