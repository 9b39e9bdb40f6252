-- Coroutines, closures, string methods, tables and sort: the interpreter's control paths.
local function gen(n)
  return coroutine.wrap(function()
    for i = 1, n do coroutine.yield(i, i * 0.5, string.format("%g", i / 3)) end
    return "done"
  end)
end
local g = gen(5)
for _ = 1, 6 do print(g()) end
local co = coroutine.create(function(a, b)
  local c = coroutine.yield(a + b)
  local d, e = coroutine.yield(c * 2)
  error({code = d + e})
end)
print(coroutine.resume(co, 1, 2))
print(coroutine.resume(co, 10))
local ok, err = coroutine.resume(co, 3, 4)
print(ok, type(err), err.code, coroutine.status(co))
print(coroutine.isyieldable(), select(2, coroutine.running()))
-- producer/consumer with many switches
local prod = coroutine.create(function()
  local x = 1.0
  for i = 1, 2000 do x = x * 1.0001 + i; coroutine.yield(x) end
end)
local acc = 0
while true do
  local _, v = coroutine.resume(prod)
  if v == nil then break end
  acc = acc + v
end
print(string.format("%.17g", acc))
local t = {}
for i = 1, 200 do t[i] = (i * 7919) % 211 + i / 1000 end
table.sort(t, function(a, b) return a > b end)
print(t[1], t[100], t[200], #t)
local words = {}
for w in ("The quick brown fox jumps over the lazy dog"):gmatch("%a+") do words[#words + 1] = w:lower():rep(2, "-") end
print(table.concat(words, ","), ("x = %d"):format(42), ("abc"):byte(1, -1))
print(("hello world"):gsub("o", "0"), ("%d+"):len(), string.pack and #string.pack("<i4d", 1, 2.5))
print(string.unpack("<d", string.pack("<d", 0.1)), utf8.char(72, 228, 8364, 128512), utf8.len("häll€"))
local E = setmetatable({}, {__tostring = function() return "E" end})
print(select("#", pcall(error)), pcall(error, "boom", 0), tostring(select(2, pcall(error, E))))
local mt = {__add = function(a, b) return a.v + b.v end, __index = function(_, k) return k .. "!" end}
local A = setmetatable({v = 1.5}, mt)
print(A + setmetatable({v = 2}, mt), A.foo, rawget(A, "foo"))
print(load("return 2^10 + 0.5")(), #arg, arg[0] ~= nil)
