-- wrk script: POST /tenants/{tenant}/brands with a name no other request uses, so every request
-- is a create that commits (201). Used by bench/catalog_http_bench.sh; see docs/PERFORMANCE.md.
--   wrk -t2 -c64 -d10s -s bench/catalog_create_brand.lua http://127.0.0.1:8080
-- WRK_TENANT (default "load") names the tenant. Each wrk thread numbers its own requests and
-- starts from a random prefix, so threads and runs never repeat a name.
local tenant = os.getenv("WRK_TENANT") or "load"
local counter = 0
local prefix = ""
local statuses = {}
local threads = {}

function setup(thread)
  table.insert(threads, thread)
end

function init(args)
  math.randomseed(os.time() + tonumber(tostring({}):match("0x(%x+)") or "0", 16) % 100000)
  prefix = string.format("%08x%08x", math.random(0, 0x7fffffff), math.random(0, 0x7fffffff))
end

function request()
  counter = counter + 1
  local body = string.format('{"name":"brand %s-%d"}', prefix, counter)
  return wrk.format("POST", "/tenants/" .. tenant .. "/brands",
                    {["Content-Type"] = "application/json"}, body)
end

function response(status, headers, body)
  statuses[status] = (statuses[status] or 0) + 1
end

function done(summary, latency, requests)
  io.write("------------------------------\n")
  for _, p in pairs({50, 90, 99, 99.9}) do
    io.write(string.format("latency p%s: %.2f ms\n", p, latency:percentile(p) / 1000.0))
  end
  io.write(string.format("commands/s: %.0f\n", summary.requests / (summary.duration / 1e6)))
end
