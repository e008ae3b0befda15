/**
 * The sliding-window log of memoryWindow.ts, kept in Redis so every instance spends the same budget.
 * One script call is one atomic decision (Redis runs scripts one at a time), so concurrent instances
 * can never both take the last unit.
 *
 * Layout per subject, both keys under one hash tag so they live in one cluster slot:
 * - `<prefix>{<subject>}:runs`: sorted set, one member per millisecond that holds admissions, scored
 *   by that millisecond (range removal of what left the window is one ZRANGEBYSCORE).
 * - `<prefix>{<subject>}:counts`: hash, admissions per millisecond member, plus `total`.
 * As in memory, a millisecond's admissions share one member, so memory is bounded by
 * min(limit, windowMs) members per subject (instead of one member per admission), and both keys
 * expire one window after the last admission, which evicts idle subjects without a sweeper.
 *
 * KEYS: runs, counts. ARGV: window ms, limit, now ms (empty: use the Redis server's TIME, the one clock
 * all instances share, so skew between instances cannot widen the window).
 * Reply: {1, remaining, reset ms} when admitted, {0, retry-after ms, 0} when refused.
 */
export const SLIDING_WINDOW_SCRIPT = `
local runs, counts = KEYS[1], KEYS[2]
local window = tonumber(ARGV[1])
local limit = tonumber(ARGV[2])
local now = tonumber(ARGV[3])
if not now then
  local time = redis.call('TIME')
  now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
end
-- A clock that stepped back records at the newest instant instead: stricter, never looser.
local newest = redis.call('ZRANGE', runs, -1, -1, 'WITHSCORES')
if newest[2] and tonumber(newest[2]) > now then now = tonumber(newest[2]) end

local total = tonumber(redis.call('HGET', counts, 'total') or 0)
local expiredAny = false
while true do
  local expired = redis.call('ZRANGEBYSCORE', runs, '-inf', now - window, 'LIMIT', 0, 256)
  if #expired == 0 then break end
  expiredAny = true
  local expiredCounts = redis.call('HMGET', counts, unpack(expired))
  for i = 1, #expiredCounts do total = total - tonumber(expiredCounts[i] or 0) end
  redis.call('HDEL', counts, unpack(expired))
  redis.call('ZREM', runs, unpack(expired))
end

if total < limit then
  local member = string.format('%d', now)
  redis.call('ZADD', runs, now, member)
  redis.call('HINCRBY', counts, member, 1)
  redis.call('HSET', counts, 'total', total + 1)
  redis.call('PEXPIRE', runs, window)
  redis.call('PEXPIRE', counts, window)
  local oldest = redis.call('ZRANGE', runs, 0, 0, 'WITHSCORES')
  return {1, limit - total - 1, tonumber(oldest[2]) + window - now}
end

if expiredAny then redis.call('HSET', counts, 'total', total) end
-- Admitting needs at most limit - 1 admissions in the window: wait for the (total - limit + 1)-th
-- oldest to leave. It is the first member unless an operator lowered the limit below the window's count.
local rank = total - limit + 1
local offset = 0
while true do
  local page = redis.call('ZRANGE', runs, offset, offset + 255, 'WITHSCORES')
  -- The counts always sum to total, so the walk ends inside the set; the guard only keeps a corrupted
  -- pair of keys from looping forever inside Redis.
  if #page == 0 then return {0, window, 0} end
  for i = 1, #page, 2 do
    rank = rank - tonumber(redis.call('HGET', counts, page[i]) or 0)
    if rank <= 0 then return {0, tonumber(page[i + 1]) + window - now, 0} end
  end
  offset = offset + 256
end
`;
