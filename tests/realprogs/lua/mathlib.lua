-- The math library and integer/float conversion rules.
local xs = {0.25, 0.5, 1, 2, 3.75, 10, 100.5, -0.75, -3.5, 1e-5, 12345.678}
for _, x in ipairs(xs) do
  print(string.format("%.17g %.17g %.17g %.17g %.17g %.17g", math.sin(x), math.cos(x), math.tan(x),
        math.exp(x), math.sqrt(math.abs(x)), math.atan(x, 0.7)))
  print(string.format("%.17g %.17g %.17g %.17g", math.log(math.abs(x)), math.log(math.abs(x), 2),
        math.log(math.abs(x), 10), math.fmod(x, 0.3)))
  print(math.floor(x), math.ceil(x), math.tointeger(x), math.modf(x))
  print(math.type(x), x // 1, x % 1, -x // 0.5, x ^ 2, x ^ 0.5)
end
print(math.maxinteger, math.mininteger, math.maxinteger + 1 == math.mininteger, math.maxinteger + 0.0)
print(math.ult(1, -1), math.abs(math.mininteger), 7 // 0.0, -7 // 0.0, 0/0 ~= 0/0, 3 % -2, -3 % 2, 3.5 % -2)
print(5 // 2, -5 // 2, 5.0 // 2, -5 % 3, 5 % -3.0, 2^63 == math.maxinteger + 1.0, 1 < 1.5, 2^53 == 2^53 + 1)
print(math.tointeger(2^53), math.tointeger("8"), math.tointeger(2^63), 3 | 0, pcall(function() return 3.5 | 0 end))
print(string.format("%d", 3.0), pcall(string.format, "%d", 3.5), 1e308 * 10 == math.huge, -(0/0) ~= -(0/0))
print(math.floor(-0.0), 1/math.floor(-0.0), math.ceil(-0.5), 1/math.ceil(-0.5), math.max(1, 2.5, -1), math.min(3, 1.0))
for i = 1, 12 do io.write(i * 0.1, " ", i / 7, " ", (i * 1234567) // 13, " ", i << 60, " ", i >> 1, " ") end
print()
local s = 0.0
for i = 1, 100000 do s = s + 1 / (i * i) end
print(string.format("%.17g %a", s, s), math.sqrt(6 * s))
math.randomseed(42, 7)
local r = {}
for i = 1, 10 do r[#r + 1] = math.random(1, 1000) end
print(table.concat(r, " "), string.format("%.17g", math.random()))
print(8 // 3 * 3 + 8 % 3, 2^-1074 / 2, -2^-1074 / 2, 1 / (-2^-1074 / 2), (2^1023 * 2) - (2^1023 * 2))
