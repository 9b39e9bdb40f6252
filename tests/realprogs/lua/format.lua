-- Float formatting: %g %a %.17g %e %f, tostring of floats and integers, edge values.
local vals = {0.0, -0.0, 1.0, -1.5, 0.1, 1/3, 2/3, math.pi, -math.pi, 1e300 * 10, -1e300 * 10,
              2^-1074, 2^-1022, 2^-1022 - 2^-1074, 1.7976931348623157e308, 2^53, 2^53 + 1, 2^63,
              -2^63, 123456789.125, 1e-7, 5e-324, 0.5, 2.5, 1e21, 1e15 + 0.3, 100, 7.0e22}
for i, v in ipairs(vals) do
  print(i, string.format("%g|%.3g|%.17g|%a|%.3a|%e|%.0e|%.10f|%5.1f|%-12g|%+g", v, v, v, v, v, v, v, v, v, v, v))
  print(i, tostring(v), v == math.floor(v) and math.type(v) or "frac", string.format("%q", v))
end
print(string.format("%g %g %g", 0/0 ~= 0/0 and 1 or 0, math.huge, -math.huge))
print(tostring(1e100), tostring(-1e-100), tostring(2^24), tostring(123.0), 1e15, 1e16, 0.1 + 0.2)
for k = -20, 20 do io.write(string.format("%.15g ", 10.0^k * 1.2345678901234567)) end
print()
for k = 1, 30 do io.write(string.format("%." .. (k % 18 + 1) .. "g ", math.sqrt(k))) end
print()
print(string.format("%5.2s|%-5d|%05d|%x|%X|%o|%c|%i", "abc", 42, -42, 255, 3054, 8, 65, 7))
print(string.format("%q", "tab\tnl\nnul\0end"), string.format("%q", math.mininteger), string.format("%q", 0/0 ~= 0/0))
print(tonumber("0x1p4"), tonumber("  12.5e1  "), tonumber("0x.8"), tonumber("1e"), tonumber("inf"), tonumber("0x10", 10))
print(tonumber("z", 36), tonumber("777", 8), tonumber("-ff", 16), tonumber("1e500"), tonumber("-0.0"))
