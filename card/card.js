// The VibeSell card: an MCP App view (MCP Apps 2026-01-26, MCP-CONFORMANCE §6d). It talks to its
// host over postMessage JSON-RPC, renders each tool result by its `kind` (seed 001's table), lets
// the user decide approvals (`tools/call decide_approval`) and answer questions (`ui/message`),
// opens links only through the host (`ui/open-link`), and never reaches the network itself.
// Every piece of result data reaches the page through DOM text nodes and attributes, never as
// markup, so nothing a provider or a prospect wrote can become HTML or script.
(function () {
  "use strict";
  var PROTOCOL = "2026-01-26";
  var APP_INFO = { name: "vibesell-card", version: "2.0.0" };
  // PRODUCT §3: the app-only tool the card calls to apply the user's decision.
  var DECIDE_TOOL = "decide_approval";
  var SVGNS = "http://www.w3.org/2000/svg";
  var root = document.getElementById("root");
  var host = { caps: {}, locale: undefined, timeZone: undefined };
  var renders = 0;
  var ticking = [];
  var page = null; // on the VibeSell web page: its data (see the end of this file)

  // ---- host bridge (APP-P1..P8) -------------------------------------------------------------
  var nextId = 1;
  var pending = {};
  function send(msg) { window.parent.postMessage(msg, "*"); }
  function request(method, params, timeoutMs) {
    var id = nextId++;
    send({ jsonrpc: "2.0", id: id, method: method, params: params || {} });
    return new Promise(function (resolve, reject) {
      var timer = timeoutMs ? setTimeout(function () {
        delete pending[id];
        reject({ code: -32001, message: "The host did not answer in time." });
      }, timeoutMs) : null;
      pending[id] = { resolve: resolve, reject: reject, timer: timer };
    });
  }
  function notify(method, params) { send({ jsonrpc: "2.0", method: method, params: params || {} }); }
  function reply(id, result) { send({ jsonrpc: "2.0", id: id, result: result }); }
  function replyError(id, code, message) { send({ jsonrpc: "2.0", id: id, error: { code: code, message: message } }); }

  window.addEventListener("message", function (event) {
    if (event.source !== window.parent) return; // only our host may talk to us
    var msg = event.data;
    if (!msg || typeof msg !== "object" || msg.jsonrpc !== "2.0") return;
    if (msg.method === undefined) {
      var p = pending[msg.id];
      if (!p) return;
      delete pending[msg.id];
      if (p.timer) clearTimeout(p.timer);
      if (msg.error) p.reject(msg.error); else p.resolve(msg.result);
      return;
    }
    if (msg.id !== undefined && msg.id !== null) return onRequest(msg);
    onNotification(msg);
  });

  function onRequest(msg) {
    switch (msg.method) {
      case "ui/resource-teardown":
        ticking.forEach(clearInterval);
        ticking = [];
        return reply(msg.id, {});
      case "ping": return reply(msg.id, {});
      default: return replyError(msg.id, -32601, "Method not found: " + msg.method);
    }
  }

  function onNotification(msg) {
    var params = msg.params || {};
    switch (msg.method) {
      case "ui/notifications/tool-input": return showWorking();
      case "ui/notifications/tool-result": return showResult(params);
      case "ui/notifications/tool-cancelled":
        return render(header("Cancelled", null), el("p", { class: "muted" }, params.reason || "This request was cancelled before it finished."));
      case "ui/notifications/host-context-changed": return applyContext(params);
    }
  }

  // ---- theme, locale and size (APP-P3, APP-P7) -----------------------------------------------
  function applyContext(ctx) {
    if (!ctx || typeof ctx !== "object") return;
    var html = document.documentElement;
    if (ctx.theme === "light" || ctx.theme === "dark") {
      html.setAttribute("data-theme", ctx.theme);
      html.style.colorScheme = ctx.theme;
    }
    var vars = ctx.styles && ctx.styles.variables;
    if (vars && typeof vars === "object") Object.keys(vars).forEach(function (k) {
      // Only custom properties, and never a value that loads something: a host variable must not make the
      // card fetch anything (the card stays offline whatever it is given).
      var v = vars[k];
      if (k.indexOf("--") !== 0) return;
      if (typeof v === "string" && v && !/url\s*\(/i.test(v)) html.style.setProperty(k, v);
      else if (v === null || v === "") html.style.removeProperty(k);
    });
    if (typeof ctx.locale === "string") { host.locale = ctx.locale; html.setAttribute("lang", ctx.locale); }
    if (typeof ctx.timeZone === "string") host.timeZone = ctx.timeZone;
    reportSize();
  }

  var lastSize = "";
  var ready = false; // sizes are reported once the handshake is done (APP-P4)
  function reportSize() {
    if (!ready) return;
    // Measure the content, not the frame: with the root at max-content the height can shrink
    // again when a view gets shorter (a `scrollHeight` never goes below the frame's own height).
    var html = document.documentElement;
    var saved = html.style.height;
    html.style.height = "max-content";
    var h = Math.ceil(html.getBoundingClientRect().height);
    html.style.height = saved;
    var w = Math.ceil(window.innerWidth);
    var key = w + "x" + h;
    if (key === lastSize) return;
    lastSize = key;
    notify("ui/notifications/size-changed", { width: w, height: h });
  }
  if (typeof ResizeObserver === "function") {
    var ro = new ResizeObserver(function () { reportSize(); });
    ro.observe(document.documentElement);
    ro.observe(document.body);
  }

  // ---- DOM helpers: text only --------------------------------------------------------------
  function el(tag, attrs) {
    var node = document.createElement(tag);
    setAttrs(node, attrs);
    for (var i = 2; i < arguments.length; i++) append(node, arguments[i]);
    return node;
  }
  function svg(tag, attrs) {
    var node = document.createElementNS(SVGNS, tag);
    setAttrs(node, attrs);
    for (var i = 2; i < arguments.length; i++) append(node, arguments[i]);
    return node;
  }
  function setAttrs(node, attrs) {
    if (attrs) Object.keys(attrs).forEach(function (k) {
      var v = attrs[k];
      if (v === null || v === undefined || v === false) return;
      if (k.slice(0, 2) === "on" && typeof v === "function") node.addEventListener(k.slice(2), v);
      // Styles through the CSSOM, which a host's CSP never blocks (a style attribute it may).
      else if (k === "style" && typeof v === "object") Object.keys(v).forEach(function (p) { node.style[p] = v[p]; });
      else node.setAttribute(k, v === true ? "" : String(v));
    });
  }
  function append(node, child) {
    if (child === null || child === undefined || child === false || child === "") return;
    if (Array.isArray(child)) return child.forEach(function (c) { append(node, c); });
    node.appendChild(typeof child === "object" ? child : document.createTextNode(String(child)));
  }
  function render() {
    ticking.forEach(clearInterval);
    ticking = [];
    root.textContent = "";
    for (var i = 0; i < arguments.length; i++) append(root, arguments[i]);
    root.setAttribute("data-rendered", String(++renders));
    reportSize();
  }

  // ---- formatting ----------------------------------------------------------------------------
  function isNum(v) { return typeof v === "number" && isFinite(v); }
  function isStr(v) { return typeof v === "string" && v !== ""; }
  function isObj(v) { return v !== null && typeof v === "object" && !Array.isArray(v); }
  function list(v) { return Array.isArray(v) ? v : []; }
  function num(v, opts) {
    if (!isNum(v)) return isStr(v) ? v : "—";
    try { return new Intl.NumberFormat(host.locale, opts).format(v); } catch (e) { return String(v); }
  }
  function pct(v, digits) {
    if (!isNum(v)) return "—";
    return num(v, { style: "percent", maximumFractionDigits: digits === undefined ? 1 : digits });
  }
  // Money is { amount, currency } in the currency's minor unit (src/plans.rs `Money`: 6300 usd
  // is $63.00); a bare number is in major units.
  function money(v) {
    if (v === null || v === undefined) return null;
    var amount = v, cur = "USD";
    try {
      if (isObj(v)) {
        if (!isNum(v.amount) || !isStr(v.currency)) return null;
        cur = v.currency.toUpperCase();
        var digits = new Intl.NumberFormat("en", { style: "currency", currency: cur }).resolvedOptions().maximumFractionDigits;
        amount = v.amount / Math.pow(10, digits);
      }
      if (!isNum(amount)) return isStr(amount) ? amount : null;
      return new Intl.NumberFormat(host.locale, {
        style: "currency", currency: cur, minimumFractionDigits: amount % 1 === 0 ? 0 : 2, maximumFractionDigits: 2
      }).format(amount);
    } catch (e) { return num(amount) + " " + cur; }
  }
  function per(interval) {
    return { month: "/mo", monthly: "/mo", year: "/yr", yearly: "/yr", annual: "/yr", day: "/day" }[interval] || (interval ? "/" + interval : "");
  }
  // Dates arrive as ms since the epoch, or ISO strings ("2026-12-21" is a calendar day).
  function toDate(v) {
    if (isNum(v)) return new Date(v);
    if (isStr(v)) {
      var m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(v);
      var d = m ? new Date(+m[1], +m[2] - 1, +m[3]) : new Date(v);
      return isNaN(d.getTime()) ? null : d;
    }
    return null;
  }
  function fmtDate(v, opts) {
    var d = toDate(v);
    if (!d) return isStr(v) ? v : "—";
    var o = opts || { weekday: "short", day: "numeric", month: "short" };
    if (isNum(v) && host.timeZone) o.timeZone = host.timeZone;
    try { return new Intl.DateTimeFormat(host.locale, o).format(d); } catch (e) { return d.toDateString(); }
  }
  function fmtTime(v) {
    return fmtDate(v, { day: "numeric", month: "short", hour: "numeric", minute: "2-digit" });
  }
  function ago(v) {
    var d = toDate(v);
    if (!d) return "";
    var s = Math.round((Date.now() - d.getTime()) / 1000);
    if (s < 60) return "just now";
    if (s < 3600) return Math.round(s / 60) + " min ago";
    if (s < 86400) return Math.round(s / 3600) + " h ago";
    if (s < 7 * 86400) return Math.round(s / 86400) + " d ago";
    return fmtDate(v, { day: "numeric", month: "short" });
  }
  function timeLeft(ms) {
    if (ms <= 0) return null;
    var m = Math.floor(ms / 60000);
    if (m < 1) return "less than a minute";
    if (m < 60) return m + " min";
    var h = Math.floor(m / 60);
    if (h < 48) return h + " h " + (m % 60 ? (m % 60) + " min" : "");
    return Math.floor(h / 24) + " days";
  }
  function human(key) {
    var s = String(key).replace(/_/g, " ").replace(/([a-z0-9])([A-Z])/g, "$1 $2").toLowerCase();
    return s.charAt(0).toUpperCase() + s.slice(1);
  }
  function plural(n, one, many) { return num(n) + " " + (n === 1 ? one : (many || one + "s")); }

  // ---- building blocks -------------------------------------------------------------------------
  var LABELS = {
    approval: "Approval", approvals: "Pending approvals", campaign: "Campaign",
    campaign_estimate: "Campaign estimate", checkout: "Checkout", choice: "Question for you",
    domain_quote: "Domain prices", email_step: "Sending addresses", first_email: "First email check",
    lead_count: "Lead pool", lead_preview: "Lead sample", memory: "Memory", offer: "Offer",
    plans: "Plans and billing", playbook: "Playbook", portal: "Billing portal", replies: "Replies",
    sending_choice: "Sending source", sending_setup: "Sending setup", sequence: "Email sequence",
    sizing: "Sending capacity", support: "Support", target: "Target", warmed_shelf: "Warmed domains",
    warmup: "Warm-up", workspace: "Workspace"
  };
  var TONES = {
    pending: "warn", done: "ok", not_done: "bad", rejected: "mute", expired: "mute",
    pass: "ok", ok: "ok", warn: "warn", warning: "warn", fail: "bad", error: "bad",
    active: "ok", ready: "ok", running: "info", warming: "info", draft: "mute", paused: "warn",
    completed: "ok", stopped: "mute", ordered: "info", pending_dns: "warn", available: "ok",
    taken: "mute", interested: "ok", not_now: "warn", not_interested: "mute", out_of_office: "mute",
    unsubscribe: "bad", bounce: "bad", received: "info", open: "info"
  };
  function mark() {
    return svg("svg", { class: "mark", viewBox: "0 0 16 16", "aria-hidden": "true" },
      svg("rect", { width: 16, height: 16, rx: 4 }),
      svg("path", { d: "M4 4.5 8 11.5 12 4.5", fill: "none", "stroke-width": 2, "stroke-linecap": "round", "stroke-linejoin": "round" }));
  }
  function header(eyebrow, title, status, sub) {
    return el("header", { class: "head" },
      el("div", { class: "eyebrow" }, mark(), el("span", null, "VibeSell"), eyebrow ? el("span", { class: "dot" }, eyebrow) : null,
        status ? el("span", { class: "spacer" }) : null, status),
      title ? el("h2", null, title) : null,
      sub ? el("p", { class: "sub" }, sub) : null);
  }
  function badge(text, tone) { return el("span", { class: "badge " + (tone || TONES[text] || "mute") }, text); }
  function statusBadge(status, labels) {
    if (!isStr(status)) return null;
    return badge((labels && labels[status]) || human(status), TONES[status]);
  }
  function section(title, body, extra) {
    if (!body || (Array.isArray(body) && !body.filter(Boolean).length)) return null;
    return el("section", null, el("h3", null, title, extra ? el("span", { class: "h3x" }, extra) : null), body);
  }
  function stat(label, value, note, tone) {
    if (value === undefined || value === null || value === "—") return null;
    return el("div", { class: "stat" + (tone ? " " + tone : "") },
      el("div", { class: "v" }, value), el("div", { class: "l" }, label), note ? el("div", { class: "n" }, note) : null);
  }
  function stats() {
    var items = Array.prototype.slice.call(arguments).filter(Boolean);
    return items.length ? el("div", { class: "stats" }, items) : null;
  }
  function kv(pairs) {
    var rows = pairs.filter(function (p) { return p && p[1] !== undefined && p[1] !== null && p[1] !== ""; });
    return rows.length ? el("dl", { class: "kv" }, rows.map(function (p) { return [el("dt", null, p[0]), el("dd", null, p[1])]; })) : null;
  }
  function chips(items, cls) {
    var xs = list(items).filter(function (x) { return x !== null && x !== undefined && x !== ""; });
    return xs.length ? el("ul", { class: "chips" + (cls ? " " + cls : "") }, xs.map(function (x) { return el("li", null, isObj(x) ? (x.label || x.name || JSON.stringify(x)) : x); })) : null;
  }
  function bullets(items, cls) {
    var xs = list(items).filter(Boolean);
    return xs.length ? el("ul", { class: "bullets" + (cls ? " " + cls : "") }, xs.map(function (x) { return el("li", null, x); })) : null;
  }
  function notice(tone, title, text) {
    return el("div", { class: "notice " + tone, role: tone === "bad" || tone === "warn" ? "alert" : null },
      el("strong", null, title), text ? el("span", null, " " + text) : null);
  }
  function meter(used, limit, tone) {
    var ratio = isNum(used) && isNum(limit) && limit > 0 ? Math.min(1, used / limit) : 0;
    return el("div", { class: "meter" + (tone ? " " + tone : ratio >= 0.9 ? " warn" : ""), role: "meter", "aria-valuemin": 0, "aria-valuemax": limit, "aria-valuenow": used },
      el("span", { style: { width: (ratio * 100).toFixed(1) + "%" } }));
  }
  function table(columns, rows, cls) {
    return el("div", { class: "tablewrap" }, el("table", { class: cls || null },
      el("thead", null, el("tr", null, columns.map(function (c) { return el("th", { class: c.num ? "num" : null, scope: "col" }, c.label); }))),
      el("tbody", null, rows.map(function (r) {
        return el("tr", null, columns.map(function (c) {
          var v = c.get(r);
          return el("td", { class: c.num ? "num" : null }, v === undefined || v === null || v === "" ? el("span", { class: "muted" }, "—") : v);
        }));
      }))));
  }
  // `{{variable}}` placeholders shown as tokens, so a template reads as one.
  function templated(text, cls) {
    var out = el("div", { class: cls || "body" });
    String(text).split(/(\{\{\s*[\w.]+\s*\}\})/).forEach(function (part, i) {
      append(out, i % 2 ? el("span", { class: "var" }, part.replace(/[{}\s]/g, "")) : part);
    });
    return out;
  }
  function button(label, attrs) { return el("button", Object.assign({ type: "button", class: "btn" }, attrs || {}), label); }
  function hostName(url) { try { return new URL(url).host; } catch (e) { return ""; } }
  function openLink(url) {
    if (!isStr(url)) return Promise.resolve();
    return request("ui/open-link", { url: url }, 30000);
  }
  // A button that asks the host to open `url`; without that capability the address is shown.
  function linkButton(label, url, cls) {
    if (!isStr(url) || !/^https?:\/\//i.test(url)) return null;
    if (page) return el("a", { class: "btn " + (cls || "secondary"), href: url }, label);
    if (!host.caps.openLinks) return el("p", { class: "small muted" }, label + ": ", el("span", { class: "mono sel" }, url));
    return el("span", { class: "linkrow" }, button(label + " ↗", { class: "btn " + (cls || "secondary"), title: url, onclick: function () { openLink(url); } }),
      el("span", { class: "small muted" }, hostName(url)));
  }

  // ---- charts (inline SVG, colours from CSS classes so they follow the theme) --------------------
  // Drawn at the card's own width, so their text keeps its size on a narrow screen.
  function chartWidth() { return Math.max(300, Math.min(640, (root.clientWidth || 600) - 36)); }
  function hbars(items, fmt) {
    var xs = list(items).filter(function (x) { return isObj(x) && isNum(x.count !== undefined ? x.count : x.value); });
    if (!xs.length) return null;
    var val = function (x) { return x.count !== undefined ? x.count : x.value; };
    var max = Math.max.apply(null, xs.map(val)) || 1;
    var rowH = 22, w = chartWidth(), lw = w < 420 ? 110 : 150, vw = 70, h = xs.length * rowH;
    return svg("svg", { class: "chart", viewBox: "0 0 " + w + " " + h, role: "img", "aria-label": xs.map(function (x) { return (x.label || x.value) + " " + val(x); }).join(", ") },
      xs.map(function (x, i) {
        var y = i * rowH, bw = Math.max(2, (w - lw - vw) * val(x) / max);
        return svg("g", null,
          svg("text", { x: lw - 8, y: y + 15, "text-anchor": "end", class: "lbl" }, String(x.label || x.name || "")),
          svg("rect", { x: lw, y: y + 4, width: bw.toFixed(1), height: rowH - 8, rx: 3, class: i === 0 ? "bar" : "bar soft" }),
          svg("text", { x: lw + bw + 6, y: y + 15, class: "val" }, fmt ? fmt(val(x)) : num(val(x))));
      }));
  }
  // Columns (e.g. emails per day) with an optional line (e.g. replies) on its own scale.
  function columns(points, key, lineKey, opts) {
    var xs = list(points).filter(isObj);
    if (xs.length < 2) return null;
    var w = chartWidth(), h = 150, pad = { l: 34, r: 34, t: 10, b: 22 };
    var iw = w - pad.l - pad.r, ih = h - pad.t - pad.b;
    var max = Math.max.apply(null, xs.map(function (p) { return isNum(p[key]) ? p[key] : 0; })) || 1;
    var lmax = lineKey ? Math.max.apply(null, xs.map(function (p) { return isNum(p[lineKey]) ? p[lineKey] : 0; })) || 1 : 1;
    var step = iw / xs.length, bw = Math.max(2, step * 0.68);
    var kids = [
      svg("line", { x1: pad.l, x2: w - pad.r, y1: pad.t + ih + 0.5, y2: pad.t + ih + 0.5, class: "axis" }),
      svg("text", { x: pad.l - 6, y: pad.t + 8, "text-anchor": "end", class: "tick" }, num(max)),
      svg("text", { x: pad.l - 6, y: pad.t + ih, "text-anchor": "end", class: "tick" }, "0")
    ];
    xs.forEach(function (p, i) {
      var v = isNum(p[key]) ? p[key] : 0, bh = ih * v / max;
      kids.push(svg("rect", { x: (pad.l + i * step + (step - bw) / 2).toFixed(1), y: (pad.t + ih - bh).toFixed(1), width: bw.toFixed(1), height: bh.toFixed(1), rx: 2, class: "bar" },
        svg("title", null, (p.label || fmtDate(p.date, { day: "numeric", month: "short" })) + ": " + num(v) + (lineKey && isNum(p[lineKey]) ? ", " + num(p[lineKey]) + " " + (opts && opts.lineName || lineKey) : ""))));
    });
    var every = Math.ceil(xs.length / 6);
    xs.forEach(function (p, i) {
      if (i % every) return;
      kids.push(svg("text", { x: (pad.l + i * step + step / 2).toFixed(1), y: h - 6, "text-anchor": "middle", class: "tick" },
        p.label ? String(p.label) : fmtDate(p.date, { day: "numeric", month: "short" })));
    });
    if (lineKey) {
      var d = xs.map(function (p, i) {
        var v = isNum(p[lineKey]) ? p[lineKey] : 0;
        return (i ? "L" : "M") + (pad.l + i * step + step / 2).toFixed(1) + " " + (pad.t + ih - ih * v / lmax).toFixed(1);
      }).join(" ");
      kids.push(svg("path", { d: d, class: "line", fill: "none" }));
      kids.push(svg("text", { x: w - pad.r + 6, y: pad.t + 8, class: "tick accent2" }, num(lmax)));
    }
    return svg("svg", { class: "chart", viewBox: "0 0 " + w + " " + h, role: "img", "aria-label": (opts && opts.label) || "Chart" }, kids);
  }
  // Low–high ranges with the central estimate marked.
  function ranges(rows) {
    var xs = rows.filter(function (r) { return r && isObj(r.v) && isNum(r.v.high); });
    if (!xs.length) return null;
    var max = Math.max.apply(null, xs.map(function (r) { return r.v.high; })) || 1;
    var w = chartWidth(), lw = w < 420 ? 110 : 150, rowH = 42, iw = w - lw - 60;
    return svg("svg", { class: "chart", viewBox: "0 0 " + w + " " + (xs.length * rowH + 4), role: "img",
      "aria-label": xs.map(function (r) { return r.label + " " + r.v.low + " to " + r.v.high; }).join(", ") },
      xs.map(function (r, i) {
        var y = i * rowH + 4, x0 = lw + iw * (r.v.low || 0) / max, x1 = lw + iw * r.v.high / max;
        var mid = isNum(r.v.mid) ? r.v.mid : (r.v.low + r.v.high) / 2, xm = lw + iw * mid / max;
        return svg("g", null,
          svg("text", { x: lw - 10, y: y + 16, "text-anchor": "end", class: "lbl" }, r.label),
          svg("rect", { x: lw, y: y + 9, width: iw, height: 6, rx: 3, class: "track" }),
          svg("rect", { x: x0.toFixed(1), y: y + 6, width: Math.max(4, x1 - x0).toFixed(1), height: 12, rx: 6, class: "bar soft" }),
          svg("circle", { cx: xm.toFixed(1), cy: y + 12, r: 6, class: "dotmark" }),
          svg("text", { x: xm.toFixed(1), y: y + 32, "text-anchor": "middle", class: "val" }, num(mid)),
          svg("text", { x: x1 + 8, y: y + 16, class: "tick" }, num(r.v.low) + "–" + num(r.v.high)));
      }));
  }
  function area(points, key, label, today) {
    var xs = list(points).filter(function (p) { return isObj(p) && isNum(p[key]); });
    if (xs.length < 2) return null;
    var w = chartWidth(), h = 90, pl = 30, pb = 18, iw = w - pl - 8, ih = h - pb - 8;
    var max = Math.max.apply(null, xs.map(function (p) { return p[key]; })) || 1;
    var pts = xs.map(function (p, i) { return [pl + iw * i / (xs.length - 1), 8 + ih - ih * p[key] / max]; });
    var line = pts.map(function (p, i) { return (i ? "L" : "M") + p[0].toFixed(1) + " " + p[1].toFixed(1); }).join(" ");
    var at = -1;
    xs.forEach(function (p, i) { if (p.day === today) at = i; });
    return svg("svg", { class: "chart", viewBox: "0 0 " + w + " " + h, role: "img", "aria-label": label },
      svg("path", { d: line + " L" + (pl + iw) + " " + (8 + ih) + " L" + pl + " " + (8 + ih) + " Z", class: "fill" }),
      at >= 0 ? [svg("line", { x1: pts[at][0], x2: pts[at][0], y1: 8, y2: 8 + ih, class: "axis" }),
        svg("circle", { cx: pts[at][0], cy: pts[at][1], r: 4.5, class: "dotmark" }),
        svg("text", { x: pts[at][0] + 8, y: 18, class: "tick" }, "today")] : null,
      svg("path", { d: line, class: "line", fill: "none" }),
      svg("text", { x: pl - 4, y: 16, "text-anchor": "end", class: "tick" }, num(max)),
      svg("text", { x: pl, y: h - 4, class: "tick" }, xs[0].label || ("Day " + (xs[0].day || 1))),
      svg("text", { x: w - 8, y: h - 4, "text-anchor": "end", class: "tick" }, xs[xs.length - 1].label || ("Day " + (xs[xs.length - 1].day || xs.length))));
  }
  // Steps over time, with the ready date called out.
  function timeline(steps) {
    var xs = list(steps).filter(isObj);
    if (!xs.length) return null;
    return el("ol", { class: "timeline" }, xs.map(function (s) {
      var st = s.status || "todo";
      return el("li", { class: st + (s.highlight || s.step === "ready" ? " goal" : "") },
        el("span", { class: "node", "aria-hidden": "true" }, st === "done" ? "✓" : ""),
        el("span", { class: "t" }, s.title || human(s.step || "")),
        el("span", { class: "d" }, s.date !== undefined ? fmtDate(s.date) : ""),
        s.detail ? el("span", { class: "x" }, s.detail) : null);
    }));
  }

  // ---- results --------------------------------------------------------------------------------
  function showWorking() { render(header(null, null), el("p", { class: "muted working" }, el("span", { class: "spin", "aria-hidden": "true" }), "Working…")); }

  function dataOf(result) {
    if (isObj(result.structuredContent)) return result.structuredContent;
    // Hosts on protocol versions before 2025-06-18 get the JSON as a text block instead.
    var blocks = list(result.content);
    for (var i = blocks.length - 1; i >= 0; i--) {
      if (!blocks[i] || blocks[i].type !== "text") continue;
      try { var v = JSON.parse(blocks[i].text); if (isObj(v) && isStr(v.kind)) return v; } catch (e) { /* prose */ }
    }
    return null;
  }
  function textOf(result) {
    return list(result.content).filter(function (b) { return b && b.type === "text" && isStr(b.text); })
      .map(function (b) { return b.text; }).filter(function (t) { return t.charAt(0) !== "{"; }).join("\n\n");
  }

  function showResult(result) {
    if (!isObj(result)) return;
    if (result.isError) return render(refusal(textOf(result)));
    var data = dataOf(result);
    if (!data) return render(header(null, "Done"), el("p", { class: "prose" }, textOf(result) || "No details to show."));
    renderData(data);
  }
  function refusal(text) {
    return [header("Not done", "VibeSell could not do this yet", badge("Refused", "bad")),
      el("p", { class: "prose" }, text || "No reason was given."),
      el("p", { class: "small muted" }, "Nothing was changed. The assistant can take it from here.")];
  }

  // A field a view cannot do without; a view missing one falls back to the generic view.
  function Missing(field) { this.field = field; }
  function need(d, key, test) {
    var v = d[key];
    if (v === undefined || v === null || (test && !test(v))) throw new Missing(key);
    return v;
  }

  function renderData(d) { render(viewOf(d)); }
  function viewOf(d) {
    var view = VIEWS[d.kind], nodes = null;
    if (view) {
      try { nodes = view(d); } catch (e) {
        if (!(e instanceof Missing) && window.console) console.warn("VibeSell card: view failed", e);
      }
    }
    if (!nodes) nodes = generic(d, !!view);
    return el("div", { class: "view", "data-kind": String(d.kind), "data-view": nodes.generic ? "generic" : "designed" }, nodes);
  }

  function generic(d, known) {
    var label = LABELS[d.kind] || human(d.kind || "Result");
    var out = [header(label, label, null,
      known ? "Shown as a plain list: this result has fields this card does not know yet." : null)];
    out.push(tree(d, 0));
    out.generic = true;
    return out;
  }
  function tree(v, depth) {
    if (Array.isArray(v)) {
      if (!v.length) return el("span", { class: "muted" }, "none");
      if (v.every(function (x) { return !isObj(x) && !Array.isArray(x); })) return chips(v.map(String));
      var cols = [];
      v.slice(0, 50).forEach(function (x) { if (isObj(x)) Object.keys(x).forEach(function (k) { if (cols.indexOf(k) < 0 && !isObj(x[k]) && !Array.isArray(x[k])) cols.push(k); }); });
      if (depth < 2 && cols.length && cols.length <= 6) {
        return [table(cols.map(function (k) { return { label: human(k), num: isNum(v[0] && v[0][k]), get: function (r) { return scalar(r[k]); } }; }), v.slice(0, 50)),
          v.length > 50 ? el("p", { class: "small muted" }, "and " + num(v.length - 50) + " more") : null];
      }
      return el("ol", { class: "plainlist" }, v.slice(0, 50).map(function (x) { return el("li", null, tree(x, depth + 1)); }));
    }
    if (isObj(v)) {
      var keys = Object.keys(v).filter(function (k) { return k !== "kind"; });
      if (depth > 3) return el("span", { class: "mono small" }, JSON.stringify(v));
      return el("dl", { class: "kv" }, keys.map(function (k) { return [el("dt", null, human(k)), el("dd", null, tree(v[k], depth + 1))]; }));
    }
    return scalar(v);
  }
  function scalar(v) {
    if (v === null || v === undefined) return el("span", { class: "muted" }, "—");
    if (typeof v === "boolean") return v ? "Yes" : "No";
    if (isNum(v)) return v > 1e12 && v < 4e12 ? fmtTime(v) : num(v);
    if (isObj(v) || Array.isArray(v)) return el("span", { class: "mono small" }, JSON.stringify(v));
    return String(v);
  }

  // ---- approvals (PRODUCT §6) -----------------------------------------------------------------
  var APPROVAL_STATUS = { pending: "Waiting for you", done: "Done", not_done: "Not done", rejected: "Rejected" };
  function impactList(impact) {
    if (isStr(impact)) return el("ul", { class: "impact" }, el("li", null, impact));
    var xs = list(impact);
    if (!xs.length && isObj(impact)) xs = Object.keys(impact).map(function (k) { return { label: human(k), value: impact[k] }; });
    if (!xs.length) return null;
    return el("ul", { class: "impact" }, xs.map(function (x) {
      if (isObj(x)) return el("li", null, el("span", { class: "il" }, x.label || ""), el("strong", null, x.value !== undefined ? scalar(x.value) : ""), x.detail ? el("span", { class: "muted" }, " " + x.detail) : null);
      return el("li", null, String(x));
    }));
  }
  function expiry(a, into, onExpire) {
    var at = toDate(a.expiresAt);
    if (!at) return;
    function tick() {
      var left = timeLeft(at.getTime() - Date.now());
      into.textContent = "";
      if (left) append(into, ["Expires in ", el("strong", null, left), " · ", fmtTime(at.getTime())]);
      else { append(into, el("strong", null, "Expired")); append(into, " · it can no longer be approved"); if (onExpire) onExpire(); }
      reportSize();
    }
    tick();
    ticking.push(setInterval(tick, 30000));
  }
  function approvalView(a, compact) {
    need(a, "id", isStr); need(a, "status", isStr);
    var action = isStr(a.action) ? human(a.action) : "Approval";
    var box = el("div", { class: "approval " + a.status + (compact ? " compact" : "") });
    var expired = false;
    var when = el("p", { class: "when small muted" });
    var outcome = el("div", { class: "outcome", "aria-live": "polite" });
    var actions = null;
    // Approved and being carried out: still `pending`, with `result` saying so (no decision left).
    var executing = a.status === "pending" && isStr(a.result);
    // On the VibeSell page the decision is a form POST with the page's CSRF token.
    var form = page && isObj(page.decide) && page.decide.id === a.id && a.decideHere === true ? page.decide : null;
    if (a.status === "pending" && !executing) {
      if (form) {
        var yes = el("button", { type: "submit", class: "btn primary", name: "decision", value: "approve" }, "Approve");
        var no = el("button", { type: "submit", class: "btn secondary", name: "decision", value: "reject" }, "Reject");
        actions = el("form", { class: "actions", method: "post", action: form.action, "data-form": "decide", onsubmit: function (e) {
          var by = e.submitter;
          // Once the form's data is taken: a second click sends nothing more.
          setTimeout(function () { yes.disabled = no.disabled = true; if (by) by.textContent = by === yes ? "Approving…" : "Rejecting…"; });
        } }, el("input", { type: "hidden", name: "csrf", value: form.csrf }), yes, no);
        expiry(a, when, function () { expired = true; yes.disabled = no.disabled = true; });
      } else if (a.decideHere === true && host.caps.serverTools) {
        var approve = button("Approve", { class: "btn primary", "data-decision": "approve" });
        var reject = button("Reject", { class: "btn secondary", "data-decision": "reject" });
        var decide = function (decision) {
          if (expired) return;
          approve.disabled = reject.disabled = true;
          (decision === "approve" ? approve : reject).textContent = decision === "approve" ? "Approving…" : "Rejecting…";
          outcome.textContent = "";
          request("tools/call", { name: DECIDE_TOOL, arguments: { id: a.id, decision: decision } }, 120000).then(function (res) {
            if (res && res.isError) {
              approve.disabled = reject.disabled = false;
              approve.textContent = "Approve"; reject.textContent = "Reject";
              append(outcome, notice("bad", "Not decided.", textOf(res) || "VibeSell refused this decision."));
              return reportSize();
            }
            // The assistant did not see this click: tell it what the user decided and what
            // VibeSell did, in the tool's own words for the model, when the host takes context.
            if (host.caps.updateModelContext && textOf(res)) {
              request("ui/update-model-context", { content: [{ type: "text", text: textOf(res) }] }, 30000).then(null, function () {});
            }
            var next = res && dataOf(res);
            if (next && next.kind === "approval") { box.replaceWith(approvalView(next, compact)); reportSize(); }
            else renderData(next || { kind: "approval", id: a.id, status: decision === "approve" ? "done" : "rejected" });
          }, function (err) {
            approve.disabled = reject.disabled = false;
            approve.textContent = "Approve"; reject.textContent = "Reject";
            append(outcome, notice("bad", "Could not reach VibeSell.", (err && err.message) || "Try again, or decide on the VibeSell page."));
            reportSize();
          });
        };
        approve.addEventListener("click", function () { decide("approve"); });
        reject.addEventListener("click", function () { decide("reject"); });
        actions = el("div", { class: "actions" }, approve, reject, a.appUrl ? el("span", { class: "spacer" }) : null,
          a.appUrl && host.caps.openLinks ? button("Open in VibeSell ↗", { class: "btn ghost", onclick: function () { openLink(a.appUrl); } }) : null);
        expiry(a, when, function () { expired = true; approve.disabled = reject.disabled = true; });
      } else {
        actions = el("div", { class: "actions" }, linkButton(page ? "Review and decide" : "Decide on VibeSell", a.appUrl, "primary"));
        expiry(a, when);
      }
    }
    append(box, [
      compact ? el("div", { class: "arow" }, el("strong", null, action), statusBadge(a.status, APPROVAL_STATUS)) :
        header(LABELS.approval + " · " + action, a.summary || action, statusBadge(a.status, APPROVAL_STATUS)),
      compact && a.summary ? el("p", null, a.summary) : null,
      money(a.cost) ? el("div", { class: "cost" }, el("span", { class: "muted" }, a.status === "done" ? "Charged" : "Cost"), el("strong", null, money(a.cost))) : null,
      a.status === "pending" || !compact ? section(a.status === "pending" ? "What happens if you approve" : a.status === "done" ? "What was done" : "What it would have done", impactList(a.impact)) : null,
      a.irreversible === true && a.status === "pending" && !executing ? notice("warn", "This can't be undone.", "Once approved, VibeSell carries it out right away.") : null,
      executing ? notice("info", "Approved.", a.result) : null,
      a.status === "done" ? notice("ok", "Done.", a.result || a.reason || "VibeSell carried it out" + (a.decidedAt ? " on " + fmtTime(a.decidedAt) : "") + ".") : null,
      a.status === "not_done" ? notice("bad", "Not done.", (a.reason || a.result || "It could not be carried out.") + " Nothing was charged.") : null,
      a.status === "rejected" ? notice("mute", "Rejected.", "Nothing was done" + (a.decidedAt ? " (" + fmtTime(a.decidedAt) + ")" : "") + ".") : null,
      actions, when.firstChild ? when : null, outcome,
      a.status !== "pending" && a.appUrl && !compact && !page ? linkButton("See it in VibeSell", a.appUrl) : null
    ]);
    return box;
  }

  // ---- questions (PRODUCT §5) ------------------------------------------------------------------
  function choiceView(c) {
    var question = need(c, "question", isStr);
    var choices = need(c, "choices", Array.isArray);
    var card = need(c, "card", isStr);
    var canSend = !!host.caps.message;
    var sent = el("div", { class: "outcome", "aria-live": "polite" });
    var controls = [];
    function answer(text, label) {
      controls.forEach(function (b) { b.disabled = true; });
      var msg = "My answer to “" + question + "” (card " + card + "): " + text;
      request("ui/message", { role: "user", content: [{ type: "text", text: msg }] }, 30000).then(function (res) {
        if (res && res.isError) throw { message: "The host did not take the answer." };
        sent.textContent = "";
        append(sent, notice("ok", "Sent:", label + ". The assistant continues from your answer."));
        reportSize();
      }, function (err) {
        controls.forEach(function (b) { b.disabled = false; });
        sent.textContent = "";
        append(sent, notice("bad", "Not sent.", ((err && err.message) || "") + " Tell the assistant your answer in the chat."));
        reportSize();
      });
    }
    var opts = el("div", { class: "options" }, choices.filter(isObj).map(function (ch) {
      var b = el("button", { type: "button", class: "option", "data-choice": ch.id, disabled: !canSend },
        el("span", { class: "ol" }, ch.label || ch.id), ch.description ? el("span", { class: "od" }, ch.description) : null);
      b.addEventListener("click", function () {
        b.classList.add("picked");
        answer(ch.id + " (" + (ch.label || ch.id) + ")", ch.label || ch.id);
      });
      controls.push(b);
      return b;
    }));
    var free = null;
    if (c.allowFreeText === true) {
      var input = el("input", { type: "text", class: "input", maxlength: 500, placeholder: "Or answer in your own words", "aria-label": "Your answer", disabled: !canSend });
      var go = button("Send", { class: "btn secondary", disabled: !canSend });
      var submit = function () {
        var t = input.value.trim();
        if (!t) return input.focus();
        answer(t, "“" + t + "”");
      };
      go.addEventListener("click", submit);
      input.addEventListener("keydown", function (e) { if (e.key === "Enter") submit(); });
      controls.push(input, go);
      free = el("div", { class: "free" }, input, go);
    }
    return [
      header(LABELS.choice, question, badge("Your call", "info"), c.reason),
      opts, free, sent,
      el("p", { class: "small muted" }, canSend ? "Your answer goes into the conversation; the assistant goes on from there. Nothing is set up, reserved or billed by answering."
        : "Tell the assistant your answer in the chat.")
    ];
  }

  // ---- the views --------------------------------------------------------------------------------
  var VIEWS = {
    workspace: function (d) {
      var journey = need(d, "journey", Array.isArray);
      var done = journey.filter(function (s) { return s.status === "done"; }).length;
      var o = isObj(d.offer) ? d.offer : null;
      return [
        header(LABELS.workspace, o ? o.product : "Your VibeSell workspace", d.canAct === false ? badge("Read only", "mute") : badge(done + " of " + journey.length + " steps", "info"),
          o ? o.valueProposition || o.description : "Start by telling VibeSell what you sell."),
        isNum(d.pendingApprovalCount) && d.pendingApprovalCount > 0 ? notice("warn", plural(d.pendingApprovalCount, "decision") + (d.pendingApprovalCount === 1 ? " waits" : " wait") + " for you:",
          list(d.pendingApprovals).map(function (a) { return a.summary; }).filter(isStr).join("; ")) : null,
        el("div", { class: "progress", "aria-hidden": "true" }, el("span", { style: { width: (journey.length ? 100 * done / journey.length : 0).toFixed(1) + "%" } })),
        el("ol", { class: "journey" }, journey.map(function (s) {
          return el("li", { class: s.status, title: human(s.status) }, el("span", { class: "node", "aria-hidden": "true" }, s.status === "done" ? "✓" : ""), s.title);
        })),
        isObj(d.nextStep) ? el("div", { class: "next" }, el("div", { class: "nl" }, "Next"), el("strong", null, d.nextStep.title),
          el("p", { class: "muted" }, d.nextStep.why), d.nextStep.tool && !page ? el("span", { class: "mono small" }, d.nextStep.tool) : null) :
          notice("ok", "Every step is done.", "Your campaign is running; ask for replies any time."),
        isObj(d.plan) && isStr(d.plan.name) ? el("p", { class: "small muted" }, "Plan: " + d.plan.name + (d.plan.status && d.plan.status !== "none" ? " (" + human(d.plan.status).toLowerCase() + ")" : "")) : null,
        section("Remembered", list(d.memories).length ? el("ul", { class: "notes" }, list(d.memories).map(function (m) {
          return el("li", null, m.topic ? el("span", { class: "topic" }, m.topic) : null, el("span", null, m.note), el("span", { class: "small muted" }, ago(m.updatedAt)));
        })) : null)
      ];
    },
    offer: function (d) {
      need(d, "product", isStr);
      return [
        header(LABELS.offer, d.product, d.changed === false ? badge("Unchanged", "mute") : badge("Saved", "ok"), d.description),
        el("blockquote", { class: "pitch" }, d.valueProposition),
        kv([["Company", d.companyName], ["Website", d.website], ["Pricing", d.pricing], ["Call to action", d.callToAction], ["Postal address", d.postalAddress]]),
        !d.postalAddress ? notice("warn", "No postal address yet.", "Every cold email must carry one in its footer; add it before the first email check.") : null,
        section("Proof points", bullets(d.proofPoints, "proof"))
      ];
    },
    memory: function (d) {
      need(d, "note", isStr);
      return [
        header(LABELS.memory, "Remembered", badge(d.replaced ? "Updated" : "Saved", "ok")),
        el("div", { class: "note" }, d.topic ? el("span", { class: "topic" }, d.topic) : null, el("span", null, d.note)),
        el("p", { class: "small muted" }, plural(d.total, "note") + " in this workspace · saved " + ago(d.savedAt))
      ];
    },
    target: function (d) {
      var f = isObj(d.filters) ? d.filters : {};
      var stage = d.confirmed ? "confirmed" : Object.keys(f).length ? "filters" : "words";
      var steps = [["words", "In words"], ["filters", "As filters"], ["confirmed", "Confirmed"]];
      var idx = steps.map(function (s) { return s[0]; }).indexOf(stage);
      var groups = ["countries", "titles", "seniorities", "departments", "industries", "companySizes", "keywords"].filter(function (k) { return list(f[k]).length; });
      var excluded = list(f.excludeTitles).concat(list(f.excludeIndustries), list(f.excludeCompanyDomains), list(f.exclusions));
      return [
        header(LABELS.target, d.name || "Your ideal customer", d.confirmed ? badge("Confirmed", "ok") : badge("Draft", "warn")),
        el("ol", { class: "stepper" }, steps.map(function (s, i) { return el("li", { class: i < idx ? "done" : i === idx ? "current" : "todo" }, s[1]); })),
        isStr(d.description) ? el("blockquote", { class: "pitch" }, d.description) : null,
        groups.length ? el("div", { class: "facets" }, groups.map(function (k) { return el("div", { class: "facet" }, el("div", { class: "fl" }, human(k)), chips(f[k])); })) : null,
        excluded.length ? section("Excluded", chips(excluded, "neg")) : null,
        !d.confirmed && stage === "filters" ? el("p", { class: "small muted" }, "Confirm the target when the lead pool looks right; the lead steps use the confirmed target.") : null
      ];
    },
    lead_count: function (d) {
      var total = need(d, "total", isNum);
      var breakdowns = list(d.breakdowns).filter(function (b) { return isObj(b) && list(b.buckets).length; });
      return [
        header(LABELS.lead_count, num(total) + " people match", d.capped ? badge("At least", "info") : null, isStr(d.description) ? d.description : null),
        stats(stat("People", num(total)), isNum(d.companies) ? stat("Companies", num(d.companies)) : null,
          isNum(d.withEmail) ? stat("With a work email", num(d.withEmail), pct(d.withEmail / total, 0)) : null,
          isNum(d.available) ? stat("Not yet contacted", num(d.available)) : null),
        breakdowns.map(function (b) { return section(b.label || "By " + human(b.by || ""), hbars(b.buckets)); }),
        isObj(d.filters) ? section("Filters", el("div", { class: "facets" }, Object.keys(d.filters).filter(function (k) { return list(d.filters[k]).length; })
          .map(function (k) { return el("div", { class: "facet" }, el("div", { class: "fl" }, human(k)), chips(d.filters[k])); }))) : null
      ];
    },
    lead_preview: function (d) {
      var leads = need(d, "leads", Array.isArray);
      return [
        header(LABELS.lead_preview, plural(leads.length, "person", "people") + (isNum(d.total) ? " of " + num(d.total) : ""), badge("Sample", "info")),
        table([
          { label: "Name", get: function (r) { return el("span", { class: "who" }, el("strong", null, r.name || [r.firstName, r.lastName].filter(Boolean).join(" ")), r.email ? el("span", { class: "small muted mono" }, r.email) : null); } },
          { label: "Title", get: function (r) { return r.title; } },
          { label: "Company", get: function (r) { return el("span", { class: "who" }, r.company, r.industry || r.companySize ? el("span", { class: "small muted nw" }, [r.industry, isNum(r.companySize) ? num(r.companySize) + " staff" : r.companySize].filter(Boolean).join(" · ")) : null); } },
          { label: "Location", get: function (r) { return el("span", { class: "who" }, r.city || r.country, r.city ? el("span", { class: "small muted" }, r.country) : null); } }
        ], leads, "leads"),
        el("p", { class: "small muted" }, "Emails stay masked until leads are imported. " + (d.accessLogged !== false ? "This look-up is recorded in your personal-data access log." : ""))
      ];
    },
    playbook: function (d) {
      return [
        header(LABELS.playbook, d.name || d.angle || "Your playbook", badge("Saved", "ok"), d.name && d.angle ? d.angle : null),
        kv([["Tone", d.tone], ["Persona", d.persona], ["Call to action", d.callToAction]]),
        section("Pains to address", bullets(d.painPoints)),
        section("Proof points", bullets(d.proofPoints, "proof")),
        section("Rules", bullets(d.rules, "rules")),
        list(d.objections).length ? section("Objections", el("dl", { class: "qa" }, list(d.objections).map(function (o) { return [el("dt", null, o.objection), el("dd", null, o.answer)]; }))) : null
      ];
    },
    sequence: function (d) {
      var steps = need(d, "steps", Array.isArray);
      var day = 0;
      return [
        header(LABELS.sequence, plural(steps.length, "email") + " over " + plural(steps.reduce(function (a, s) { return a + (s.delayDays || 0); }, 0), "day"),
          d.approved ? badge("Approved", "ok") : badge("Awaiting your approval", "warn")),
        el("ol", { class: "seq" }, steps.map(function (s, i) {
          day += i ? (s.delayDays || 0) : 0;
          return el("li", null, el("div", { class: "sd" }, i ? "Day " + day : "Day 0"),
            el("div", { class: "mail" }, s.subject ? el("div", { class: "subj" }, templated(s.subject, "subject")) : el("div", { class: "subj same" }, "Reply in the same thread"), templated(s.body || ""),
              list(s.variants).length ? el("p", { class: "small muted" }, "+ " + plural(s.variants.length, "variant")) : null));
        })),
        !d.approved ? el("p", { class: "small muted" }, "Approving the sequence is your call: tell the assistant when it reads right.") : null
      ];
    },
    first_email: function (d) {
      var checks = list(d.checks);
      var bad = checks.filter(function (c) { return c.status === "fail"; }).length, warn = checks.filter(function (c) { return c.status === "warn"; }).length;
      var lead = isObj(d.lead) ? d.lead : {};
      return [
        header(LABELS.first_email, "Step 1 for " + (lead.name || "a sample lead"), bad ? badge(plural(bad, "problem"), "bad") : warn ? badge(plural(warn, "warning"), "warn") : badge("Ready to send", "ok"),
          [lead.title, lead.company].filter(Boolean).join(" at ") || null),
        el("div", { class: "email" },
          el("div", { class: "eh" }, kv([["From", d.from], ["To", d.to], ["Subject", d.subject !== undefined ? templated(d.subject, "subject") : null]])),
          templated(need(d, "body", isStr), "ebody")),
        checks.length ? section("Checks", el("ul", { class: "checks" }, checks.map(function (c) {
          return el("li", { class: c.status }, el("span", { class: "ci", "aria-hidden": "true" }, c.status === "pass" ? "✓" : c.status === "fail" ? "✕" : "!"),
            el("span", null, el("strong", null, c.label), c.detail ? el("span", { class: "muted" }, " — " + c.detail) : null));
        }))) : null
      ];
    },
    campaign_estimate: function (d) {
      var leads = need(d, "leads", isNum);
      return [
        header(LABELS.campaign_estimate, plural(leads, "lead") + (d.endDate ? " contacted by " + fmtDate(d.endDate) : ""), badge("Estimate", "info"),
          d.startDate ? "Starting " + fmtDate(d.startDate) + (d.businessDays ? ", about " + plural(d.businessDays, "business day") + " of sending" : "") : null),
        stats(stat("Emails per day", num(d.emailsPerDay)), stat("New leads per day", num(d.newLeadsPerDay)),
          stat("Steps", d.steps ? num(d.steps) : null, d.stepDelayDays ? plural(d.stepDelayDays, "day") + " apart" : null), stat("Mailboxes", num(d.mailboxes))),
        section("Expected outcome", ranges([{ label: "Replies", v: d.replies }, { label: "Positive replies", v: d.positiveReplies }, { label: "Meetings", v: d.meetings }]),
          isObj(d.replyRate) ? pct(d.replyRate.low, 0) + "–" + pct(d.replyRate.high, 0) + " reply rate" : null),
        list(d.weekly).length > 1 ? section("Emails per week", columns(d.weekly, "emails", null, { label: "Emails per week" })) : null,
        section("Assumptions", bullets(d.assumptions, "small"))
      ];
    },
    sizing: function (d) {
      var mb = need(d, "mailboxes", isNum);
      return [
        header(LABELS.sizing, plural(mb, "mailbox", "mailboxes") + " on " + plural(d.domains, "domain"), d.confirmed ? badge("Confirmed", "ok") : badge("Proposed", "warn")),
        el("div", { class: "flow" },
          stat("Emails per day", num(d.emailsPerDay), d.newLeadsPerDay ? num(d.newLeadsPerDay) + " new leads" : null),
          el("span", { class: "arrow", "aria-hidden": "true" }, "→"),
          stat("Mailboxes", num(mb), d.perMailbox ? num(d.perMailbox) + " emails each" : null),
          el("span", { class: "arrow", "aria-hidden": "true" }, "→"),
          stat("Domains", num(d.domains), d.mailboxesPerDomain ? num(d.mailboxesPerDomain) + " mailboxes each" : null)),
        kv([["Ramp", d.rampDays ? "about " + plural(d.rampDays, "day") + " to full volume" : null], ["Monthly cost", money(d.monthlyCost) ? money(d.monthlyCost) + "/mo" : null],
          ["Plan limit", isNum(d.planMailboxLimit) ? plural(d.planMailboxLimit, "mailbox", "mailboxes") : null]]),
        list(d.notes).length ? el("div", { class: "notes-s" }, bullets(d.notes, "small muted")) : null
      ];
    },
    choice: choiceView,
    sending_choice: function (d) {
      var src = need(d, "source", isStr);
      var warmed = src === "already_warmed";
      return [
        header(LABELS.sending_choice, d.label || (warmed ? "Already-warmed addresses" : "Addresses under your brand"), badge("Settled", "ok"), d.description),
        stats(stat("Ready", d.readyDate ? fmtDate(d.readyDate) : null, warmed ? "no warm-up needed" : "then warm-up"),
          stat("Mailboxes", num(d.mailboxes)), stat("Domains", isNum(d.domains) ? num(d.domains) : list(d.domains).length || null)),
        isObj(d.next) ? el("div", { class: "next" }, el("div", { class: "nl" }, "Next"), el("strong", null, d.next.title || human(d.next.tool || "")), d.next.why ? el("p", { class: "muted" }, d.next.why) : null) : null
      ];
    },
    email_step: function (d) {
      var addresses = list(d.addresses), domains = list(d.domains);
      if (!addresses.length && !domains.length) throw new Missing("addresses");
      return [
        header(LABELS.email_step, addresses.length ? plural(addresses.length, "sending address", "sending addresses") : plural(domains.length, "domain"), badge("Settled", "ok"), d.description),
        domains.length ? section("Domains", chips(domains.map(function (x) { return isObj(x) ? x.name + (money(x.price) ? " · " + money(x.price) + per(x.price.interval || "year") : "") : x; }))) : null,
        addresses.length ? section("Addresses", el("ul", { class: "addr" }, addresses.map(function (x) {
          return el("li", null, el("span", { class: "mono" }, isObj(x) ? x.address : x), isObj(x) && x.name ? el("span", { class: "muted" }, x.name) : null);
        }))) : null,
        isObj(d.next) ? el("div", { class: "next" }, el("div", { class: "nl" }, "Next"), el("strong", null, d.next.title), d.next.why ? el("p", { class: "muted" }, d.next.why) : null) : null
      ];
    },
    domain_quote: function (d) {
      var rows = need(d, "domains", Array.isArray);
      var free = rows.filter(function (r) { return r.available; });
      return [
        header(LABELS.domain_quote, plural(free.length, "domain") + " available of " + num(rows.length), null, "Look-alike domains keep your main domain's reputation safe."),
        table([
          { label: "Domain", get: function (r) { return el("span", { class: "mono" }, r.name); } },
          { label: "Status", get: function (r) { return r.available ? badge(r.premium ? "Premium" : "Available", r.premium ? "warn" : "ok") : badge("Taken", "mute"); } },
          { label: "Price", num: true, get: function (r) { return r.available && money(r.price) ? money(r.price) + per(r.price.interval || r.period || "year") : null; } }
        ], rows),
        d.total ? el("p", { class: "total" }, "Total for the available ones: ", el("strong", null, money(d.total) + per(d.total.interval || "year"))) : null
      ];
    },
    warmed_shelf: function (d) {
      var rows = need(d, "domains", Array.isArray);
      return [
        header(LABELS.warmed_shelf, plural(rows.length, "warmed domain") + " ready now", badge("No warm-up", "ok"), "Already-warmed addresses send at once, without your brand's name."),
        table([
          { label: "Domain", get: function (r) { return el("span", { class: "mono" }, r.name || r.domain); } },
          { label: "Mailboxes", num: true, get: function (r) { return num(r.mailboxes); } },
          { label: "Warmed for", num: true, get: function (r) { return isNum(r.ageDays) ? plural(r.ageDays, "day") : null; } },
          { label: "Health", num: true, get: function (r) { return isNum(r.health) ? num(r.health) + "%" : null; } },
          { label: "Price", num: true, get: function (r) { return money(r.price) ? money(r.price) + per(r.price.interval || "month") : null; } }
        ], rows)
      ];
    },
    sending_setup: function (d) {
      var domains = list(d.domains), boxes = list(d.mailboxes);
      if (!d.readyDate && !domains.length) throw new Missing("readyDate");
      return [
        header(LABELS.sending_setup, d.readyDate ? "Ready to send " + fmtDate(d.readyDate) : "Sending setup", statusBadge(d.status),
          [d.source === "already_warmed" ? "Already-warmed addresses" : d.source === "own_names" ? "Addresses under your brand" : null,
            domains.length ? plural(domains.length, "domain") : null, boxes.length ? plural(boxes.length, "mailbox", "mailboxes") : null].filter(Boolean).join(" · ")),
        timeline(d.timeline),
        domains.length ? section("Domains and DNS", table([
          { label: "Domain", get: function (r) { return el("span", { class: "mono" }, r.name); } },
          { label: "Status", get: function (r) { return statusBadge(r.status); } },
          { label: "DNS", get: function (r) {
            var dns = isObj(r.dns) ? r.dns : {};
            return el("span", { class: "dns" }, ["spf", "dkim", "dmarc", "mx"].filter(function (k) { return dns[k] !== undefined; }).map(function (k) {
              return el("span", { class: "chk " + (dns[k] === "pass" ? "ok" : dns[k] === "fail" ? "bad" : "warn"), title: k.toUpperCase() + ": " + dns[k] }, (dns[k] === "pass" ? "✓ " : dns[k] === "fail" ? "✕ " : "… ") + k.toUpperCase());
            }));
          } }
        ], domains)) : null,
        boxes.length ? section("Mailboxes", el("ul", { class: "boxes" }, boxes.map(function (m) {
          var prog = isNum(m.warmupDay) && isNum(m.warmupDays) ? m.warmupDay / m.warmupDays : null;
          return el("li", null, el("span", { class: "mono" }, m.address), statusBadge(m.status),
            prog !== null ? el("span", { class: "mp" }, meter(m.warmupDay, m.warmupDays, "info"), el("span", { class: "small muted" }, "day " + m.warmupDay + " of " + m.warmupDays)) : el("span"));
        }))) : null
      ];
    },
    warmup: function (d) {
      var day = d.day, days = d.days;
      if (!d.readyDate && !isNum(days)) throw new Missing("readyDate");
      return [
        header(LABELS.warmup, d.readyDate ? "Ready to send " + fmtDate(d.readyDate) : "Warm-up", statusBadge(d.status),
          isNum(day) && isNum(days) ? "Day " + day + " of " + days + (isNum(d.mailboxes) ? " · " + plural(d.mailboxes, "mailbox", "mailboxes") : "") : null),
        isNum(day) && isNum(days) ? el("div", { class: "bigmeter" }, meter(day, days, "info"), el("span", { class: "small muted" }, pct(day / days, 0) + " of the way")) : null,
        timeline(d.timeline),
        list(d.ramp).length > 1 ? section("Warm-up emails per mailbox per day", area(d.ramp, "volume", "Warm-up volume per day", day)) : null,
        stats(stat("Inbox placement", isNum(d.inboxRate) ? pct(d.inboxRate, 0) : null), stat("Health", isNum(d.health) ? num(d.health) + "%" : null),
          stat("Then, per mailbox", isNum(d.dailyLimitAfter) ? num(d.dailyLimitAfter) + "/day" : null))
      ];
    },
    campaign: function (d) {
      var s = isObj(d.stats) ? d.stats : {};
      var contacted = s.contacted || s.sent || 0;
      var rate = function (k) { return isNum(s[k]) && contacted ? pct(s[k] / contacted) : null; };
      var bounce = isNum(s.bounced) && s.sent ? s.bounced / s.sent : null;
      var health = isObj(d.health) ? d.health : {};
      var alertAt = isNum(health.bounceAlert) ? health.bounceAlert : 0.02;
      return [
        header(LABELS.campaign, need(d, "name", isStr), statusBadge(d.status),
          [d.launchedAt ? "Launched " + fmtDate(d.launchedAt) : null, isNum(d.leads) ? plural(d.leads, "lead") : null, isNum(d.dailyLimit) ? num(d.dailyLimit) + " emails/day max" : null].filter(Boolean).join(" · ")),
        d.status === "paused" && d.pauseReason ? notice("warn", "Paused.", d.pauseReason) : null,
        stats(stat("Contacted", num(s.contacted)), stat("Emails sent", num(s.sent)), stat("Replies", num(s.replied), rate("replied")),
          stat("Positive", num(s.positive), rate("positive"), "ok"), stat("Bounced", num(s.bounced), bounce !== null ? pct(bounce) : null, bounce !== null && bounce >= alertAt ? "bad" : null),
          stat("Opt-outs", num(s.unsubscribed))),
        list(d.daily).length > 1 ? section("Emails per day", columns(d.daily, "sent", "replies", { label: "Emails sent per day with replies", lineName: "replies" }),
          el("span", { class: "legend" }, el("i", { class: "lg bar" }), "sent ", el("i", { class: "lg line" }), "replies")) : null,
        list(d.steps).length ? section("By step", table([
          { label: "Step", get: function (r) { return "Step " + r.step; } },
          { label: "Sent", num: true, get: function (r) { return num(r.sent); } },
          { label: "Replies", num: true, get: function (r) { return num(r.replies); } },
          { label: "Reply rate", num: true, get: function (r) { return r.sent ? pct(r.replies / r.sent) : null; } }
        ], d.steps)) : null,
        bounce !== null ? el("p", { class: "small muted" }, "Bounce rate " + pct(bounce) + "; VibeSell alerts at " + pct(alertAt, 0) + " and pauses the campaign at " + pct(isNum(health.bouncePause) ? health.bouncePause : 0.03, 0) + ".") : null
      ];
    },
    replies: function (d) {
      var rs = need(d, "replies", Array.isArray);
      return [
        header(LABELS.replies, isNum(d.total) ? plural(d.total, "reply", "replies") : plural(rs.length, "reply", "replies"), d.nextCursor ? badge("More available", "info") : null),
        rs.length ? el("ol", { class: "replies" }, rs.map(function (r) {
          var from = isObj(r.from) ? r.from : { name: r.from };
          return el("li", null,
            el("div", { class: "rh" }, el("span", { class: "avatar", "aria-hidden": "true" }, String(from.name || from.email || "?").charAt(0).toUpperCase()),
              el("span", { class: "who" }, el("strong", null, from.name || from.email), el("span", { class: "small muted" }, [from.title, from.company].filter(Boolean).join(", "))),
              el("span", { class: "spacer" }), statusBadge(r.classification), el("span", { class: "small muted" }, ago(r.receivedAt))),
            r.subject ? el("div", { class: "rsubj small muted" }, r.subject) : null,
            // Reply bodies are written by the prospect: shown as their words, never as
            // instructions, and never as markup (PRODUCT §7, list_replies).
            el("figure", { class: "theirs" },
              el("figcaption", null, el("span", { class: "tag" }, "Prospect's words"), " written by " + (from.name || from.email || "the prospect") + ", shown as received; not instructions"),
              el("blockquote", null, r.body || r.snippet || "")));
        })) : el("p", { class: "muted" }, "No replies yet."),
        d.nextCursor ? el("p", { class: "small muted" }, "Ask the assistant for the next page.") : null
      ];
    },
    plans: function (d) {
      var plans = need(d, "plans", Array.isArray);
      var c = isObj(d.current) ? d.current : {};
      var cur = plans.filter(function (p) { return p.current || p.id === c.id; })[0];
      var u = isObj(d.usage) ? d.usage : {};
      var lim = cur && isObj(cur.limits) ? cur.limits : {};
      var usage = [["Leads this month", u.leadsImported, lim.leadsPerMonth], ["Mailboxes", u.mailboxes, lim.mailboxes],
        ["Active campaigns", u.activeCampaigns, lim.activeCampaigns]].filter(function (r) { return isNum(r[1]) && isNum(r[2]); });
      var credits = isObj(d.credits) ? d.credits : {};
      var names = { leadsPerMonth: ["lead a month", "leads a month"], mailboxes: ["mailbox", "mailboxes"], activeCampaigns: ["active campaign", "active campaigns"] };
      return [
        header(LABELS.plans, cur ? "You're on " + cur.name : "Plans", isStr(c.status) && c.status !== "none" ? statusBadge(c.status) : null,
          c.renewsAt ? (c.cancelAtPeriodEnd ? "Ends " : "Renews ") + fmtDate(c.renewsAt, { day: "numeric", month: "long", year: "numeric" }) : null),
        d.simulated ? notice("info", "Sandbox.", "Payments here are simulated; no real money moves.") : null,
        usage.length ? section("This month", el("ul", { class: "usage" }, usage.map(function (r) {
          return el("li", null, el("span", null, r[0]), meter(r[1], r[2]), el("span", { class: "small muted num" }, num(r[1]) + " / " + num(r[2])));
        }))) : null,
        el("div", { class: "plans" }, plans.map(function (p) {
          var isCur = cur && p.id === cur.id;
          return el("div", { class: "plan" + (isCur ? " current" : "") },
            el("div", { class: "pn" }, p.name, isCur ? badge("Current", "info") : null),
            el("div", { class: "pp" }, money(p.price) && p.price.amount > 0 ? money(p.price) : "Free", el("span", { class: "small muted" }, money(p.price) && p.price.amount > 0 ? per("month") : "")),
            isStr(p.description) ? el("p", { class: "small muted" }, p.description) : null,
            bullets(isObj(p.limits) ? Object.keys(p.limits).map(function (k) {
              return names[k] ? plural(p.limits[k], names[k][0], names[k][1]) : num(p.limits[k]) + " " + human(k).toLowerCase();
            }) : [], "small ticks"));
        })),
        isNum(credits.leads) ? el("p", { class: "small muted" }, plural(credits.leads, "lead credit") + " left this month" +
          (credits.resetsAt ? "; renewed " + fmtDate(credits.resetsAt, { day: "numeric", month: "long" }) + "." : ".")) : null,
        list(d.charges).length ? section("Payments", kv(list(d.charges).map(function (ch) {
          return [fmtDate(ch.at, { day: "numeric", month: "short", year: "numeric" }), (money(ch.amount) || "—") + " · " + (ch.description || "")];
        }))) : null,
        el("p", { class: "small muted" }, c.paying ? "Moving up is an approval you decide; lowering or cancelling happens in the billing portal." :
          "Subscribing opens a secure payment page that only you use.")
      ];
    },
    checkout: function (d) {
      var url = need(d, "url", isStr);
      var plan = isObj(d.plan) ? d.plan : { name: d.planName || d.plan, price: d.price };
      return [
        header(LABELS.checkout, "Payment page for " + (plan.name || "your plan"), badge(d.simulated ? "Sandbox" : "Secure payment", "info"),
          money(plan.price || d.amount) ? money(plan.price || d.amount) + per((plan.price || {}).interval || d.interval || "month") + (d.simulated ? ", simulated" : ", billed by Stripe") : null),
        el("div", { class: "actions" }, linkButton("Open the payment page", url, "primary")),
        d.expiresAt ? el("p", { class: "small muted" }, "This link works until " + fmtTime(d.expiresAt) + ". Only you open it; the assistant never pays.") : null
      ];
    },
    portal: function (d) {
      var url = need(d, "url", isStr);
      return [
        header(LABELS.portal, "Manage your billing", null, "Invoices, payment method and cancellation, on Stripe's billing portal."),
        el("div", { class: "actions" }, linkButton("Open the billing portal", url, "primary")),
        d.expiresAt ? el("p", { class: "small muted" }, "This link works until " + fmtTime(d.expiresAt) + ".") : null
      ];
    },
    support: function (d) {
      need(d, "reference", isStr);
      return [
        header(LABELS.support, "We got your message", badge(d.reference, "info"),
          (d.forwarded ? "The VibeSell team has it" : "It is saved; VibeSell delivers it to the team") + (isStr(d.replyTo) ? " and answers at " + d.replyTo + "." : ".")),
        isStr(d.subject) ? el("blockquote", { class: "pitch" }, d.subject) : null,
        kv([["Reference", d.reference], ["Topic", isStr(d.category) ? human(d.category) : null], ["Sent", d.createdAt ? fmtTime(d.createdAt) : null]]),
        el("p", { class: "small muted" }, "Quote the reference in any follow-up.")
      ];
    },
    approval: function (d) { return [approvalView(d, false)]; },
    approvals: function (d) {
      var xs = need(d, "approvals", Array.isArray);
      return [
        header(LABELS.approvals, xs.length ? plural(xs.length, "decision") + " waiting for you" : "Nothing waits for you", xs.length ? badge(String(xs.length), "warn") : badge("All clear", "ok")),
        xs.length ? el("div", { class: "alist" }, xs.map(function (a) { return approvalView(a, true); })) : el("p", { class: "muted" }, "When something needs your approval, it shows up here.")
      ];
    }
  };

  // ---- the VibeSell web page (/app, /app/approvals/{id}; src/webapp.rs) -------------------------
  // There is no host: the page hands over its results in a JSON data block, and the same views
  // render them, with plain links and the decision as a form. Nothing is posted to any window.
  var block = document.getElementById("vibesell-page");
  if (block) {
    try { page = JSON.parse(block.textContent); } catch (e) { page = null; }
    if (!isObj(page)) return; // the page's own plain version stays
    if (window.matchMedia && matchMedia("(prefers-color-scheme: dark)").matches) applyContext({ theme: "dark" });
    return render(list(page.results).filter(isObj).map(viewOf));
  }

  // ---- handshake (APP-P2..P4) ------------------------------------------------------------------
  request("ui/initialize", {
    protocolVersion: PROTOCOL,
    appInfo: APP_INFO,
    appCapabilities: { availableDisplayModes: ["inline"] }
  }).then(function (res) {
    res = isObj(res) ? res : {};
    host.caps = isObj(res.hostCapabilities) ? res.hostCapabilities : {};
    notify("ui/notifications/initialized", {});
    ready = true;
    applyContext(res.hostContext);
    reportSize();
  }, function () {
    render(el("p", { class: "error" }, "This host did not accept the VibeSell card."));
  });
})();
