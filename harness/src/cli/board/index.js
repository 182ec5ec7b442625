(function () {
  // Rows: [name, folder, version, outcome, transport, reason, pass, fail,
  // warn, error, judged, thin, revisions, grid, search text, description,
  // reached]. Text goes in with textContent only.
  var T = document.getElementById("servers"), tb = T.tBodies[0];
  var q = document.getElementById("q"), o = document.getElementById("outcome"), t = document.getElementById("transport");
  var d = document.getElementById("depth"), s = document.getElementById("shown"), more = document.getElementById("more");
  var pages = +T.dataset.pages, total = +T.dataset.total, areas = JSON.parse(T.dataset.areas);
  var all = null, loading = null, matches = [], shown = tb.rows.length, asked = 0;
  var words = { P: "pass", W: "warnings", F: "failures", E: "errors" };
  // The outcomes of the runner's environment, not the server's (grey).
  var grey = ["protected", "needs-secret", "needs-input", "needs-network", "needs-service", "cannot-run"];
  function load() {
    if (all) return Promise.resolve(all);
    if (!loading) {
      var ps = [];
      for (var i = 1; i <= pages; i++) {
        ps.push(fetch("data/servers-" + String(i).padStart(4, "0") + ".json").then(function (r) {
          if (!r.ok) throw new Error(r.status + " " + r.url);
          return r.json();
        }));
      }
      loading = Promise.all(ps).then(function (ds) {
        all = [];
        ds.forEach(function (x) { Array.prototype.push.apply(all, x.rows); });
        return all;
      });
    }
    return loading;
  }
  function ok(r) {
    return (!o.value || r[3] === o.value) && (!t.value || r[4] === t.value) &&
      (!d.value || (r[3] === "pass" && (d.value === "thin") === (r[11] === 1))) &&
      (!q.value || r[14].indexOf(q.value.toLowerCase()) >= 0);
  }
  function td(tr, text, cls) {
    var c = document.createElement("td");
    if (text !== undefined) c.textContent = text;
    if (cls) c.className = cls;
    tr.appendChild(c);
    return c;
  }
  function small(parent, text) {
    var x = document.createElement("div");
    x.className = "small";
    x.textContent = text;
    parent.appendChild(x);
  }
  function row(r) {
    var tr = document.createElement("tr");
    tr.dataset.outcome = r[3]; tr.dataset.transport = r[4]; tr.dataset.name = r[0]; tr.dataset.text = r[14];
    var c = td(tr), a = document.createElement("a");
    a.setAttribute("href", "servers/" + encodeURIComponent(r[1]) + "/index.html");
    a.textContent = r[0];
    c.appendChild(a); small(c, r[15]);
    td(tr, r[2]);
    c = td(tr);
    var b = document.createElement("span");
    b.className = "o"; b.textContent = r[3];
    b.style.background = r[3] === "pass" ? "#2e7d32" : r[3] === "fail" ? "#c62828" : grey.indexOf(r[3]) >= 0 ? "#6d6d6d" : "#b26a00";
    c.appendChild(b); small(c, r[5]);
    td(tr, r[10], r[11] ? "small thin" : "small");
    [6, 7, 8, 9].forEach(function (i) { td(tr, r[16] ? String(r[i]) : ""); });
    td(tr, r[12]);
    for (var i = 0; i < areas.length; i++) {
      var g = r[13].charAt(i) || ".", cell = td(tr, undefined, "g");
      cell.title = areas[i] + ": " + (words[g] || "not judged");
      if (g !== ".") { var sp = document.createElement("span"); sp.className = "g" + g; cell.appendChild(sp); }
    }
    return tr;
  }
  function say() {
    s.textContent = (all ? matches.length : total) + " of " + total + " shown" +
      (shown < (all ? matches.length : total) ? " (the first " + shown + " listed)" : "");
    more.hidden = shown >= (all ? matches.length : total);
  }
  function render(reset) {
    if (reset) { tb.textContent = ""; shown = 0; }
    var end = Math.min(matches.length, shown + 100);
    for (; shown < end; shown++) tb.appendChild(row(matches[shown]));
    say();
  }
  function update() {
    var n = ++asked;
    s.textContent = "searching every server…";
    load().then(function (a) {
      if (n !== asked) return;
      matches = a.filter(ok);
      render(true);
    }).catch(function (e) {
      s.textContent = "the list of servers could not be loaded (" + e.message + "): open the site over http(s)";
    });
  }
  [q, o, t, d].forEach(function (e) { e.addEventListener("input", update); });
  more.addEventListener("click", function () {
    load().then(function (a) {
      if (!matches.length && !q.value && !o.value && !t.value && !d.value) matches = a.slice();
      render(false);
    });
  });
  say();
})();
