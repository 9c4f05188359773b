-- wrk script for `make bench` (bench/run.py writes the data file and reads the JSON line).
--
--   wrk -t T -c C -d 10s -s bench/load.lua http://127.0.0.1:PORT/ -- DATA.lua T
--
-- DATA.lua sets `expect` (the status every response must have) and either
--   mode = "rotate": `requests`, a list of {method, path, headers, body} sent round-robin
--                    (each thread starts at a different place in the list), or
--   mode = "toggle": `headers` by card (its organizer's session) and `cells`, a list of
--                    {path, a, b}: box writes that flip each cell between its current
--                    value a and another allowed value b, always sending the value the
--                    server holds as `was`. Each thread owns the
--                    cells of every T-th card and cycles through all of its cells before
--                    writing one again, so a cell's previous write has long been answered
--                    when it is next written, and the `was` is right (a wrong one is a 409,
--                    counted as an error); a card with a write still unanswered is passed
--                    over until its answer comes. Like the organizer's page, each write also sends
--                    the card `version` it last saw (from `versions`, then from every
--                    answer's live-poll link), so the server answers with just what
--                    changed. That answer has an X-Dados-Base header; a 200 without it
--                    (the whole sheet: the version sent was not the card's) is an error.
-- done() prints one line, "BENCH_JSON {...}": counts, statuses and latency percentiles (µs).

local threads = {}
local started = 0

function setup(thread)
   thread:set("id", started)
   started = started + 1
   table.insert(threads, thread)
end

local formatted, cells, position, seen, waiting, verifying

function init(args)
   dofile(args[1])
   local nthreads = tonumber(args[2])
   statuses = {}
   unexpected = 0
   sample = nil
   if mode == "toggle" then
      cells = {}
      seen = {}
      for card, version in pairs(versions) do
         seen[tostring(card)] = version
      end
      for _, cell in ipairs(all_cells) do
         local card = string.match(cell[1], "/tarjetas/(%d+)/")
         if tonumber(card) % nthreads == id then
            table.insert(cells, {path = cell[1], card = card, a = cell[2], b = cell[3],
                                 headers = headers[tonumber(card)], flipped = false})
         end
      end
      position = 0
      waiting = {}
      verifying = id == 0
   else
      formatted = {}
      for _, r in ipairs(requests) do
         table.insert(formatted, wrk.format(r[1], r[2], r[3], r[4]))
      end
      -- Spread the threads over the list.
      position = math.floor(#formatted * id / nthreads)
   end
end

function request()
   if mode == "toggle" then
      if verifying then
         -- wrk asks thread 0 for one request right after init(), only to check it, and
         -- never sends it: that one must not flip a cell, or the cell's next write
         -- would send the value the server already holds (an answer that changes
         -- nothing, and the whole sheet).
         verifying = false
         local cell = cells[1]
         local body = "value=" .. cell.b .. "&was=" .. cell.a
         return wrk.format("POST", cell.path, cell.headers, body)
      end
      -- The next cell whose card has no write waiting for its answer, as one organizer's
      -- phone: a slow answer (a machine busy with other work) would otherwise leave the
      -- next write to its card with an old version.
      local cell
      for _ = 1, #cells do
         position = position % #cells + 1
         cell = cells[position]
         if not waiting[cell.card] then
            break
         end
      end
      waiting[cell.card] = true
      local value, was
      if cell.flipped then
         value, was = cell.a, cell.b
      else
         value, was = cell.b, cell.a
      end
      cell.flipped = not cell.flipped
      local body = "value=" .. value .. "&was=" .. was .. "&version=" .. (seen[cell.card] or "")
         .. "&answer=cells"
      return wrk.format("POST", cell.path, cell.headers, body)
   end
   position = position % #formatted + 1
   return formatted[position]
end

function response(status, headers, body)
   if mode == "toggle" and body then
      -- A plain find, then the pattern from just before it. The pattern alone, tried at
      -- every position of the body, cost wrk 48 µs of CPU per answer on this machine
      -- (29 µs this way; a floor request's answer costs it 13 µs).
      local at = string.find(body, "/vivo/?v=", 1, true)
      if at then
         local card, version = string.match(body, "/tarjetas/(%d+)/vivo/%?v=(%d+)",
                                            math.max(1, at - 24))
         if card then
            waiting[card] = nil
            if tonumber(version) > tonumber(seen[card] or -1) then
               seen[card] = version
            end
         end
      end
   end
   local key = tostring(status)
   statuses[key] = (statuses[key] or 0) + 1
   if status ~= expect or (mode == "toggle" and headers["X-Dados-Base"] == nil) then
      unexpected = unexpected + 1
      if sample == nil then
         sample = key .. " " .. string.sub(body or "", 1, 400)
      end
   end
end

local function quote(s)
   s = string.gsub(s, '[%c"\\]', function(c)
      if c == '"' then return '\\"' end
      if c == "\\" then return "\\\\" end
      return string.format("\\u%04x", string.byte(c))
   end)
   return '"' .. s .. '"'
end

function done(summary, latency, requests)
   local all, bad, first = {}, 0, nil
   for _, thread in ipairs(threads) do
      for key, n in pairs(thread:get("statuses") or {}) do
         all[key] = (all[key] or 0) + n
      end
      bad = bad + (thread:get("unexpected") or 0)
      first = first or thread:get("sample")
   end
   local parts = {}
   for key, n in pairs(all) do
      table.insert(parts, quote(key) .. ":" .. n)
   end
   local e = summary.errors
   io.write(string.format(
      'BENCH_JSON {"requests":%d,"duration_us":%d,"bytes":%d,' ..
      '"connect":%d,"read":%d,"write":%d,"timeout":%d,"status_errors":%d,' ..
      '"unexpected":%d,"statuses":{%s},' ..
      '"p50":%d,"p90":%d,"p95":%d,"p99":%d,"max":%d,"mean":%.1f,"sample":%s}\n',
      summary.requests, summary.duration, summary.bytes,
      e.connect, e.read, e.write, e.timeout, e.status,
      bad, table.concat(parts, ","),
      latency:percentile(50), latency:percentile(90), latency:percentile(95),
      latency:percentile(99), latency.max, latency.mean, quote(first or "")))
end
