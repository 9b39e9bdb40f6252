// PGO training script: deliberately unlike bench/callgrind_ir.py's QJS_WORKLOAD and microbench.js
function qsort(a, lo, hi) {
  while (lo < hi) {
    var p = a[(lo + hi) >> 1], i = lo, j = hi;
    while (i <= j) {
      while (a[i] < p) i++;
      while (a[j] > p) j--;
      if (i <= j) { var t = a[i]; a[i] = a[j]; a[j] = t; i++; j--; }
    }
    if (j - lo < hi - i) { qsort(a, lo, j); lo = i; } else { qsort(a, i, hi); hi = j; }
  }
}
function lcg(seed) { var s = seed >>> 0; return function () { s = (Math.imul(s, 1664525) + 1013904223) >>> 0; return s; }; }
function sorting(n) {
  var r = lcg(7), a = new Array(n);
  for (var i = 0; i < n; i++) a[i] = r() % 100000;
  qsort(a, 0, n - 1);
  var b = []; for (var k = 0; k < n; k++) b.push(r() & 0xffff);
  b.sort(function (x, y) { return x - y; });
  return a[n >> 1] + b[n >> 2];
}
function words(n) {
  var r = lcg(3), syl = ["ka", "to", "mi", "re", "su", "no", "ha", "ri"], m = new Map(), set = new Set();
  for (var i = 0; i < n; i++) {
    var w = syl[(r() >>> 16) & 7] + syl[(r() >>> 16) & 7] + (r() & 1 ? syl[(r() >>> 16) & 7] : "");
    m.set(w, (m.get(w) || 0) + 1); set.add(w.toUpperCase());
  }
  var best = ""; m.forEach(function (v, k) { if (!best || v > m.get(best)) best = k; });
  return best + ":" + m.size + ":" + set.size;
}
class Vec { constructor(x, y) { this.x = x; this.y = y; } add(o) { return new Vec(this.x + o.x, this.y + o.y); } len() { return Math.sqrt(this.x * this.x + this.y * this.y); } }
function vectors(n) { var v = new Vec(0, 0); for (var i = 0; i < n; i++) v = v.add(new Vec((i % 7) - 3, (i % 11) * 0.5)); return v.len().toFixed(4); }
function jsonrt(n) {
  var o = []; for (var i = 0; i < n; i++) o.push({ id: i, tag: "t" + (i % 13), vals: [i, i / 3, -i], ok: (i & 3) == 0 });
  var s = JSON.stringify(o), p = JSON.parse(s), t = 0;
  for (var j = 0; j < p.length; j++) t += p[j].vals[1];
  return s.length + ":" + t.toFixed(2);
}
function regex(n) {
  var re = /([a-z]+)-(\d+)/g, parts = [];
  for (var i = 0; i < n; i++) parts.push("ab" + String.fromCharCode(97 + i % 26) + "-" + i);
  var text = parts.join(" "), c = 0, m;
  while ((m = re.exec(text)) !== null) c += m[2].length;
  return c + ":" + text.replace(/\d/g, "#").length;
}
function tokenize(n) {
  var src = "", toks = 0;
  for (var i = 0; i < n; i++) src += "let v" + i + " = (" + i + " * 3 + x" + (i % 5) + ") ;\n";
  for (var k = 0; k < src.length; k++) {
    var ch = src.charCodeAt(k);
    if (ch >= 48 && ch <= 57) { while (k + 1 < src.length && src.charCodeAt(k + 1) >= 48 && src.charCodeAt(k + 1) <= 57) k++; toks++; }
    else if ((ch | 32) >= 97 && (ch | 32) <= 122) { while (k + 1 < src.length && /\w/.test(src[k + 1])) k++; toks++; }
    else if (ch > 32) toks++;
  }
  return toks;
}
function typed(n) { var f = new Float64Array(n), u = new Uint8Array(n); for (var i = 0; i < n; i++) { f[i] = i * 0.25; u[i] = i; } var s = 0; for (var j = 0; j < n; j++) s += f[j] * u[j]; return s; }
function* gen(n) { for (var i = 0; i < n; i++) yield i * i; }
function iterate(n) { var s = 0; for (var v of gen(n)) s += v % 7; var arr = Array.from({ length: n }, (_, i) => i); return s + arr.map(x => x * 2).filter(x => x % 3).reduce((a, b) => a + b, 0); }
function trycatch(n) { var c = 0; for (var i = 0; i < n; i++) { try { if (i % 10 == 0) throw new Error("e" + i); c++; } catch (e) { c += e.message.length; } } return c; }
console.log(sorting(60000), words(60000), vectors(60000), jsonrt(8000), regex(20000), tokenize(3000), typed(100000), iterate(40000), trycatch(40000));
