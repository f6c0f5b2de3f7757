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
        ticking.forEach(function (t) { clearInterval(t.timer); });
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
      // card fetch anything (the card stays offline whatever it is given). So no CSS escape (`\75 rl(`)
      // and no function but those of colours, lengths and fonts (not `url(`, `image-set(`, `src(`).
      var v = vars[k];
      if (k.indexOf("--") !== 0) return;
      if (typeof v === "string" && v && inert(v)) html.style.setProperty(k, v);
      else if (v === null || v === "") html.style.removeProperty(k);
    });
    if (typeof ctx.locale === "string") { host.locale = ctx.locale; html.setAttribute("lang", ctx.locale); }
    if (typeof ctx.timeZone === "string") host.timeZone = ctx.timeZone;
    reportSize();
  }

  function inert(v) {
    if (v.indexOf("\\") >= 0) return false;
    var fn = /([\w-]*)\s*\(/g, m;
    while ((m = fn.exec(v))) if (!/^(rgba?|hsla?|hwb|(ok)?lab|(ok)?lch|color(-mix)?|light-dark|calc|min|max|clamp|var)$/i.test(m[1])) return false;
    return true;
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
    root.textContent = "";
    for (var i = 0; i < arguments.length; i++) append(root, arguments[i]);
    stopHidden();
    root.setAttribute("data-rendered", String(++renders));
    reportSize();
  }
  // Stops the clocks of views no longer shown. Not before a render: the new view's own clocks
  // start while it is built, before it is shown.
  function stopHidden() {
    ticking = ticking.filter(function (t) {
      if (t.into.isConnected) return true;
      clearInterval(t.timer);
      return false;
    });
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
  // is $63.00), with an `interval` when it recurs.
  function money(v) {
    if (!isObj(v) || !isNum(v.amount) || !isStr(v.currency)) return null;
    var amount, cur = v.currency.toUpperCase();
    try {
      amount = v.amount / Math.pow(10, new Intl.NumberFormat("en", { style: "currency", currency: cur }).resolvedOptions().maximumFractionDigits);
      return new Intl.NumberFormat(host.locale, {
        style: "currency", currency: cur, minimumFractionDigits: amount % 1 === 0 ? 0 : 2, maximumFractionDigits: 2
      }).format(amount);
    } catch (e) { return num(amount) + " " + cur; }
  }
  function per(interval) {
    return { month: "/mo", year: "/yr" }[interval] || "";
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
    if (s < 0) return fmtTime(v);
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
    pending: "warn", done: "ok", not_done: "bad", rejected: "mute", past_due: "bad",
    active: "ok", ready: "ok", running: "info", warming: "info", draft: "mute", paused: "warn",
    completed: "ok", stopped: "mute", setting_up: "info", set_up: "info", attention: "bad", scheduled: "info", interested: "ok", not_now: "warn", not_interested: "mute", out_of_office: "mute",
    unsubscribe: "bad", bounce: "bad"
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
    return xs.length ? el("ul", { class: "chips" + (cls ? " " + cls : "") }, xs.map(function (x) { return el("li", null, x); })) : null;
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
  // `{{variable}}` and `{{variable|fallback}}` placeholders shown as tokens, so a template reads as one.
  function templated(text, cls) {
    var out = el("div", { class: cls || "body" });
    String(text).split(/\{\{\s*([\w.]+)(?:\|([^}]*))?\s*\}\}/).forEach(function (part, i) {
      if (i % 3 === 0) append(out, part);
      else if (i % 3 === 1) append(out, el("span", { class: "var" }, part));
      else if (part) out.lastChild.title = "If unknown: " + part;
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
    // A host that does not open it (its link policy, `isError`, no answer) leaves the address to copy.
    var row = el("span", { class: "linkrow" });
    var shown = el("span", { class: "small muted" }, hostName(url));
    append(row, [button(label + " ↗", { class: "btn " + (cls || "secondary"), title: url, onclick: function () {
      openLink(url).then(function (res) { if (res && res.isError) throw res; }).catch(function () {
        shown.className = "mono sel";
        shown.textContent = url;
        reportSize();
      });
    } }), shown]);
    return row;
  }

  // ---- charts (inline SVG, colours from CSS classes so they follow the theme) --------------------
  // Drawn at the card's own width, so their text keeps its size on a narrow screen.
  function chartWidth() { return Math.max(300, Math.min(640, (root.clientWidth || 600) - 36)); }
  function hbars(items, fmt) {
    var xs = list(items).filter(function (x) { return isObj(x) && isNum(x.count); });
    if (!xs.length) return null;
    var val = function (x) { return x.count; };
    var max = Math.max.apply(null, xs.map(val)) || 1;
    var rowH = 22, w = chartWidth(), lw = w < 420 ? 110 : 150, vw = 70, h = xs.length * rowH;
    return svg("svg", { class: "chart", viewBox: "0 0 " + w + " " + h, role: "img", "aria-label": xs.map(function (x) { return x.label + " " + x.count; }).join(", ") },
      xs.map(function (x, i) {
        var y = i * rowH, bw = Math.max(2, (w - lw - vw) * val(x) / max);
        return svg("g", null,
          svg("text", { x: lw - 8, y: y + 15, "text-anchor": "end", class: "lbl" }, String(x.label)),
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
  // Own keys only: a `kind` such as "constructor" must not find Object's.
  function own(o, k) { return Object.prototype.hasOwnProperty.call(o, k) ? o[k] : undefined; }
  function viewOf(d) {
    var view = own(VIEWS, d.kind), nodes = null;
    if (view) {
      try { nodes = view(d); } catch (e) {
        if (!(e instanceof Missing) && window.console) console.warn("VibeSell card: view failed", e);
      }
    }
    if (!nodes) nodes = generic(d, !!view);
    return el("div", { class: "view", "data-kind": String(d.kind), "data-view": nodes.generic ? "generic" : "designed" }, nodes);
  }

  function generic(d, known) {
    var label = own(LABELS, d.kind) || human(d.kind || "Result");
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
  // `impact`: lines written by VibeSell from real figures (src/workspace/approvals.rs).
  function impactList(impact) {
    var xs = list(impact).filter(isStr);
    return xs.length ? el("ul", { class: "impact" }, xs.map(function (x) { return el("li", null, x); })) : null;
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
    ticking.push({ timer: setInterval(tick, 30000), into: into });
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
            if (next && next.kind === "approval") { box.replaceWith(approvalView(next, compact)); stopHidden(); reportSize(); }
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
          host.caps.openLinks ? linkButton("Open in VibeSell", a.appUrl, "ghost") : null);
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
      a.status === "pending" || !compact ? section(a.status === "pending" ? "What happens if you approve" : a.status === "done" ? "What was approved" : "What it would have done", impactList(a.impact)) : null,
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
      // A host that refuses the message answers `isError` (McpUiMessageResult): the same as a
      // failure, so that the options come back and the user is told.
      request("ui/message", { role: "user", content: [{ type: "text", text: msg }] }, 30000).then(function (res) {
        if (res && res.isError) throw { message: "The host did not take the answer." };
      }).then(function () {
        sent.textContent = "";
        append(sent, notice("ok", "Sent:", label + ". The assistant continues from your answer."));
        reportSize();
      }, function (err) {
        controls.forEach(function (b) { b.disabled = false; b.classList.remove("picked"); });
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

  // ---- the views ----------------------------------------------------------------------------------
  // Each view reads the fields of its tool's output type (src/tools/*.rs, `kind` = the key below);
  // tests/e2e/card.test.mjs checks that the values of real results appear on the page.
  function nextBox(n) {
    return isObj(n) && isStr(n.title) ? el("div", { class: "next" }, el("div", { class: "nl" }, "Next"), el("strong", null, n.title),
      isStr(n.why) ? el("p", { class: "muted" }, n.why) : null, isStr(n.tool) && !page ? el("span", { class: "mono small" }, n.tool) : null) : null;
  }
  // Text someone else wrote (a prospect, their mail server, the lead provider), framed as theirs.
  function tag(text) { return el("span", { class: "tag" }, text); }
  function facets(f, keys) {
    var ks = keys.filter(function (k) { return list(f[k]).length; });
    return ks.length ? el("div", { class: "facets" }, ks.map(function (k) { return el("div", { class: "facet" }, el("div", { class: "fl" }, human(k)), chips(f[k])); })) : null;
  }
  var FILTERS = ["titles", "seniorities", "departments", "industries", "countries", "companySizes", "keywords"];
  function priced(p) { return money(p) ? money(p) + per(p.interval) : null; }
  function day(v) { return isStr(v) ? fmtDate(v) : null; }
  var VIEWS = {
    workspace: function (d) {
      var journey = need(d, "journey", Array.isArray);
      var done = journey.filter(function (s) { return s.status === "done"; }).length;
      var o = isObj(d.offer) ? d.offer : null, t = d.target, q = d.sequence, L = isObj(d.leads) ? d.leads : {};
      var s = isObj(d.sending) ? d.sending : {}, sz = s.sizing, c = s.campaign, pda = d.personalDataAccess;
      return [
        header(LABELS.workspace, o ? o.product : "Your VibeSell workspace", d.canAct === false ? badge("Read only", "mute") : badge(done + " of " + journey.length + " steps", "info"),
          o ? o.valueProposition || o.description : "Start by telling VibeSell what you sell."),
        isNum(d.pendingApprovalCount) && d.pendingApprovalCount > 0 ? notice("warn", plural(d.pendingApprovalCount, "decision") + (d.pendingApprovalCount === 1 ? " waits" : " wait") + " for you:",
          list(d.pendingApprovals).map(function (a) { return a.summary; }).filter(isStr).join("; ")) : null,
        isObj(c) && isStr(c.pauseReason) ? notice("warn", "Campaign paused.", c.pauseReason) : null,
        el("div", { class: "progress", "aria-hidden": "true" }, el("span", { style: { width: (journey.length ? 100 * done / journey.length : 0).toFixed(1) + "%" } })),
        el("ol", { class: "journey" }, journey.map(function (s) {
          return el("li", { class: s.status, title: human(s.status) }, el("span", { class: "node", "aria-hidden": "true" }, s.status === "done" ? "✓" : ""), s.title);
        })),
        nextBox(d.nextStep) || notice("ok", "Every step is done.", "Your campaign is running; ask for replies any time."),
        section("So far", kv([
          ["Target", isObj(t) ? (t.confirmed ? "Confirmed" : "Not confirmed yet") + " · version " + t.version + (isNum(t.poolCount) ? " · " + plural(t.poolCount, "person", "people") + " match" : "") : null],
          ["Leads", isNum(L.total) ? num(L.total) + " imported" + (L.suppressed ? " · " + num(L.suppressed) + " suppressed" : "") : null],
          ["Emails", isObj(q) ? plural(q.steps, "step") + " · version " + q.version + " · " + (q.approved ? "approved" : "not approved yet") + (q.firstEmailChecked ? " · first email checked" : "") : null],
          ["Sending", isObj(sz) ? plural(sz.mailboxes, sz.onTopOf ? "more mailbox" : "mailbox", sz.onTopOf ? "more mailboxes" : "mailboxes") + " on " + plural(sz.domains, "domain") +
            (sz.onTopOf ? " (" + num(sz.onTopOf) + " set up before)" : "") + (s.ordered ? " · " + num(s.mailboxesReady) + " of " + num(s.mailboxes) + " ready" : sz.confirmed ? "" : " (proposed)") +
            (list(s.domains).length ? " · " + s.domains.join(", ") : "") : null],
          ["Campaign", isObj(c) ? c.name + " · " + human(c.status).toLowerCase() + " · " + num(c.sent) + " sent · " + num(c.replied) + " replied" : null],
          ["Replies", s.replies ? num(s.replies) + (s.repliesUnread ? " · " + num(s.repliesUnread) + " not yet read" : "") : null],
          ["Plan", isObj(d.plan) ? d.plan.name + (d.plan.status && d.plan.status !== "none" ? " (" + human(d.plan.status).toLowerCase() + ")" : "") : null],
          ["Personal data", isObj(pda) && pda.accesses ? plural(pda.accesses, "look-up") + ", " + plural(pda.peopleShown, "person", "people") + " shown" : null]
        ])),
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
      // A deleted note (`forget`) is shown struck through, so the user sees which one went.
      return [
        header(LABELS.memory, d.forgotten ? "Forgotten" : "Remembered", d.forgotten ? badge("Deleted", "mute") : badge(d.replaced ? "Updated" : "Saved", "ok")),
        el("div", { class: d.forgotten ? "note gone" : "note" }, d.topic ? el("span", { class: "topic" }, d.topic) : null, el("span", null, d.note)),
        el("p", { class: "small muted" }, plural(d.total, "note") + " in this workspace · " + (d.forgotten ? "deleted now, saved " : "saved ") + ago(d.savedAt))
      ];
    },
    target: function (d) {
      need(d, "description", isStr);
      var f = isObj(d.filters) ? d.filters : {};
      var excluded = list(f.excludeTitles).concat(list(f.excludeIndustries), list(f.excludeCompanyDomains));
      var has = excluded.length || FILTERS.some(function (k) { return list(f[k]).length; });
      var idx = d.confirmed ? 2 : has ? 1 : 0;
      return [
        header(LABELS.target, "Your ideal customer", d.confirmed ? badge("Confirmed", "ok") : badge("Not confirmed", "warn"),
          "Version " + d.version + (isNum(d.poolCount) ? " · " + plural(d.poolCount, "person", "people") + " match" : "") + (d.confirmedAt && d.confirmed ? " · confirmed " + fmtDate(d.confirmedAt) : "")),
        d.unconfirmed ? notice("warn", "Confirmation taken away.", "The target changed after you confirmed it; confirm it again before leads are imported.") : null,
        el("ol", { class: "stepper" }, ["In words", "As filters", "Confirmed"].map(function (s, i) { return el("li", { class: i < idx ? "done" : i === idx ? "current" : "todo" }, s); })),
        el("blockquote", { class: "pitch" }, d.description),
        facets(f, FILTERS),
        excluded.length ? section("Excluded", chips(excluded, "neg")) : null,
        !d.confirmed && has ? el("p", { class: "small muted" }, "Confirm the target when the lead pool looks right; the lead steps use the confirmed target.") : null
      ];
    },
    lead_count: function (d) {
      var total = need(d, "total", isNum);
      var breakdowns = list(d.breakdowns).filter(function (b) { return isObj(b) && list(b.buckets).length; });
      var f = isObj(d.filters) ? d.filters : {};
      var out = list(f.excludeTitles).concat(list(f.excludeIndustries), list(f.excludeCompanyDomains));
      return [
        header(LABELS.lead_count, plural(total, "person", "people") + " match", d.source === "arguments" ? badge("Filters tried, not saved", "info") : null,
          "Lead provider: " + d.provider + (d.estimatedAt ? " · counted " + fmtTime(d.estimatedAt) : "")),
        stats(stat("People", num(total)), isNum(d.companies) ? stat("Companies", num(d.companies)) : null,
          isNum(d.withEmail) ? stat("With a work email", num(d.withEmail), total ? pct(d.withEmail / total, 0) : null) : null,
          isNum(d.reachable) && d.reachable < total ? stat("An import can reach", num(d.reachable), "the provider's limit", "warn") : null),
        d.exclusionsCounted === false && out.length ? el("p", { class: "small muted" }, "Exclusions are not in this count; they are left out when sampling and importing.") : null,
        breakdowns.map(function (b) { return section(b.label || "By " + human(b.by || ""), hbars(b.buckets)); }),
        section("Filters", facets(f, FILTERS)),
        out.length ? section("Excluded", chips(out, "neg")) : null
      ];
    },
    lead_preview: function (d) {
      var leads = need(d, "leads", Array.isArray);
      return [
        header(LABELS.lead_preview, plural(leads.length, "person", "people") + (isNum(d.total) ? " of " + num(d.total) : ""), badge("Sample", "info")),
        el("p", { class: "small muted src" }, tag("From " + (d.provider || "the lead provider")), " names, titles and companies as the lead provider gave them"),
        leads.length ? table([
          { label: "Name", get: function (r) { return el("span", { class: "who" }, el("strong", null, r.name), r.email ? el("span", { class: "small muted mono" }, r.email) : null); } },
          { label: "Title", get: function (r) { return r.title; } },
          { label: "Company", get: function (r) { return el("span", { class: "who" }, r.company, r.industry || r.companySize ? el("span", { class: "small muted" }, [r.industry, r.companySize ? r.companySize + " staff" : null].filter(Boolean).join(" · ")) : null); } },
          { label: "Location", get: function (r) { return r.city || r.country ? el("span", { class: "who" }, r.city || r.country, r.city ? el("span", { class: "small muted" }, r.country) : null) : null; } }
        ], leads, "leads") : el("p", { class: "muted" }, "Nobody matches these filters."),
        el("p", { class: "small muted" }, "Emails stay masked until leads are imported. " + (d.accessLogged ? "This look-up is recorded in your personal-data access log." : ""))
      ];
    },
    playbook: function (d) {
      return [
        header(LABELS.playbook, need(d, "angle", isStr), d.changed === false ? badge("Unchanged", "mute") : badge("Saved", "ok")),
        kv([["Tone", d.tone], ["Persona", d.persona], ["Sender", [d.senderName, d.senderTitle].filter(isStr).join(", ")], ["Call to action", d.callToAction]]),
        section("Pains to address", bullets(d.painPoints)),
        section("Proof points", bullets(d.proofPoints, "proof")),
        section("Rules", bullets(d.rules, "rules")),
        list(d.objections).length ? section("Objections", el("dl", { class: "qa" }, list(d.objections).map(function (o) { return [el("dt", null, o.objection), el("dd", null, o.answer)]; }))) : null
      ];
    },
    sequence: function (d) {
      var steps = need(d, "steps", Array.isArray);
      var at = 0;
      return [
        header(LABELS.sequence, plural(steps.length, "email") + " over " + plural(steps.reduce(function (a, s) { return a + (s.delayDays || 0); }, 0), "day"),
          d.approved ? badge("Approved", "ok") : badge("Awaiting your approval", "warn"),
          "Version " + d.version + (d.approved && d.approvedAt ? " · approved " + fmtDate(d.approvedAt) : "") + (d.firstEmailChecked ? " · first email checked" : "")),
        d.unapproved ? notice("warn", "Approval taken away.", "The emails changed after you approved them; they need your approval again.") : null,
        el("ol", { class: "seq" }, steps.map(function (s, i) {
          at += i ? (s.delayDays || 0) : 0;
          return el("li", null, el("div", { class: "sd" }, "Day " + at),
            el("div", { class: "mail" }, s.subject ? el("div", { class: "subj" }, templated(s.subject, "subject")) : el("div", { class: "subj same" }, "Reply in the same thread"), templated(s.body || ""),
              list(s.variants).length ? el("p", { class: "small muted" }, "+ " + plural(s.variants.length, "variant")) : null));
        })),
        section("Personalised with", chips(d.variables)),
        !d.approved ? el("p", { class: "small muted" }, "Approving the sequence is your call: tell the assistant when it reads right.") : null
      ];
    },
    first_email: function (d) {
      var checks = list(d.checks);
      var bad = checks.filter(function (c) { return c.status === "fail"; }).length, warn = checks.filter(function (c) { return c.status === "warn"; }).length;
      var lead = isObj(d.lead) ? d.lead : {};
      return [
        header(LABELS.first_email, "Step 1 for " + (lead.name || "a sample lead"), bad ? badge(plural(bad, "problem"), "bad") : warn ? badge(plural(warn, "warning"), "warn") : badge(d.verdict === "ready" ? "Ready to send" : "Check", d.verdict === "ready" ? "ok" : "warn"),
          [[lead.title, lead.company].filter(Boolean).join(" at "), lead.source === "sample" ? "a sample lead" : null, isNum(d.sequenceVersion) ? "sequence version " + d.sequenceVersion + (d.variant ? ", variant " + d.variant : "") : null].filter(Boolean).join(" · ")),
        el("div", { class: "email" },
          el("div", { class: "eh" }, kv([["From", d.from], ["To", d.to], ["Subject", isStr(d.subject) ? templated(d.subject, "subject") : null]])),
          templated(need(d, "body", isStr), "ebody")),
        checks.length ? section("Checks", el("ul", { class: "checks" }, checks.map(function (c) {
          return el("li", { class: c.status }, el("span", { class: "ci", "aria-hidden": "true" }, { pass: "✓", fail: "✕", info: "i" }[c.status] || "!"),
            el("span", null, el("strong", null, c.label), c.detail ? el("span", { class: "muted" }, " — " + c.detail) : null, isStr(c.fix) ? el("span", { class: "fix" }, "Fix: " + c.fix) : null));
        })), isNum(d.wordCount) ? plural(d.wordCount, "word") : null) : null
      ];
    },
    campaign_estimate: function (d) {
      var leads = need(d, "leads", isNum);
      var defaults = d.leadsBasis === "defaults" || d.capacityBasis === "defaults";
      return [
        header(LABELS.campaign_estimate, plural(leads, "lead") + (d.allContactedDate ? " contacted by " + fmtDate(d.allContactedDate) : ""), badge("Estimate", "info"),
          d.startDate ? "Sending " + fmtDate(d.startDate) + " to " + fmtDate(d.endDate) + ": " + plural(d.businessDays, "business day") + " over " + plural(d.calendarDays, "day") : null),
        d.beyondHorizon ? notice("warn", "Far too little capacity.", "The estimate stopped at five years; size the sending capacity for these leads.") : null,
        stats(stat("Emails per day", num(d.emailsPerDay), isNum(d.sendsPerMailboxPerDay) ? num(d.sendsPerMailboxPerDay) + " per mailbox" : null), stat("New leads per day", num(d.newLeadsPerDay)),
          stat("Steps", num(d.steps), list(d.delays).length ? "follow-ups after " + d.delays.join(", ") + " days" : null), stat("Mailboxes", num(d.mailboxes)), stat("Emails in all", num(d.emailsTotal))),
        section("Expected outcome", ranges([{ label: "Replies", v: d.replies }, { label: "Positive replies", v: d.positiveReplies }, { label: "Meetings", v: d.meetings }]),
          isObj(d.replyRate) ? pct(d.replyRate.low, 0) + "–" + pct(d.replyRate.high, 0) + " reply rate" : null),
        list(d.weekly).length > 1 ? section("Emails per week", columns(d.weekly, "emails", null, { label: "Emails per week" })) : null,
        section("Assumptions", bullets(d.assumptions, "small")),
        defaults ? el("p", { class: "small muted" }, "Some figures are VibeSell's defaults; sizing the sending capacity and importing leads make them yours.") : null
      ];
    },
    sizing: function (d) {
      var mb = need(d, "mailboxes", isNum);
      var unit = { emails_per_day: "emails a day", new_leads_per_day: "new leads a day", emails_per_month: "emails a month", new_leads_per_month: "new leads a month" }[d.unit];
      return [
        header(LABELS.sizing, plural(mb, "mailbox", "mailboxes") + " on " + plural(d.domains, "domain"), d.confirmed ? badge("Confirmed", "ok") : badge("Proposed", "warn"),
          isNum(d.volume) && unit ? "For " + num(d.volume) + " " + unit + ", " + plural(d.steps, "email") + " per lead" : null),
        el("div", { class: "flow" },
          stat("Emails per day", num(d.emailsPerDay), num(d.newLeadsPerDay) + " new leads"),
          el("span", { class: "arrow", "aria-hidden": "true" }, "→"),
          stat("Mailboxes", num(mb), num(d.perMailbox) + " emails each"),
          el("span", { class: "arrow", "aria-hidden": "true" }, "→"),
          stat("Domains", num(d.domains), num(d.mailboxesPerDomain) + " mailboxes each")),
        d.withinPlan === false ? notice("warn", "More than your plan allows.", "The " + d.plan + " plan allows " + plural(d.planMailboxLimit, "mailbox", "mailboxes") +
          (isStr(d.upgradeTo) ? "; the " + human(d.upgradeTo) + " plan fits." : ".")) : null,
        kv([["Capacity", isNum(d.capacityPerDay) ? num(d.capacityPerDay) + " emails a day once ramped" : null],
          ["Warm-up", isNum(d.warmupDaysMin) ? d.warmupDaysMin + "–" + d.warmupDaysMax + " days for new mailboxes" : null],
          ["Ramp", d.rampDays ? "about " + plural(d.rampDays, "sending day") + " to full volume" : null],
          ["Plan", isStr(d.plan) ? d.plan + ": " + plural(d.planMailboxLimit, "mailbox", "mailboxes") : null]]),
        list(d.ramp).length > 1 ? section("Cold emails a day during the ramp", area(d.ramp, "emails", "Cold emails per day during the ramp")) : null,
        list(d.notes).length ? el("div", { class: "notes-s" }, bullets(d.notes, "small muted")) : null
      ];
    },
    choice: choiceView,
    sending_choice: function (d) {
      var src = need(d, "source", isStr);
      var warmed = src === "already_warmed", ds = list(d.domains);
      return [
        header(LABELS.sending_choice, d.label || (warmed ? "Already-warmed addresses" : "Addresses under your brand"), badge(d.step === "domains" ? "Domains settled" : "Settled", "ok"), d.description),
        stats(stat("Set up by", day(d.setupDate)), stat("Ready to send", day(d.readyDate), warmed ? "no warm-up needed" : "after warm-up"),
          stat("Mailboxes", num(d.mailboxes)), stat("Domains", num(d.domainCount))),
        ds.length ? section("Domains", table([
          { label: "Domain", get: function (r) { return el("span", { class: "mono" }, r.name); } },
          { label: warmed ? "Per mailbox" : "Registration", num: true, get: function (r) { return priced(r.price); } }
        ], ds)) : null,
        nextBox(d.next)
      ];
    },
    email_step: function (d) {
      var addresses = need(d, "addresses", Array.isArray), domains = list(d.domains);
      return [
        header(LABELS.email_step, plural(addresses.length, "sending address", "sending addresses"), badge("Settled", "ok"), isStr(d.sender) ? "Sent as " + d.sender : null),
        domains.length ? section("Domains", chips(domains.map(function (x) { return x.name + (priced(x.price) ? " · " + priced(x.price) : ""); }))) : null,
        section("Addresses", el("ul", { class: "addr" }, addresses.map(function (x) {
          return el("li", null, el("span", { class: "mono" }, x.address), el("span", { class: "muted" }, x.name));
        }))),
        nextBox(d.next)
      ];
    },
    domain_quote: function (d) {
      var rows = need(d, "domains", Array.isArray);
      var free = rows.filter(function (r) { return r.available && r.suitable; });
      return [
        header(LABELS.domain_quote, plural(free.length, "domain") + " available of " + num(rows.length), badge("Nothing bought", "mute"), "Look-alike domains keep your main domain's reputation safe."),
        table([
          { label: "Domain", get: function (r) { return el("span", { class: "mono" }, r.name); } },
          { label: "Status", get: function (r) {
            return el("span", { class: "who" }, !r.available ? badge("Taken", "mute") : !r.suitable ? badge("Not suitable", "warn") : badge(r.premium ? "Premium" : "Available", r.premium ? "warn" : "ok"),
              isStr(r.reason) ? el("span", { class: "small muted" }, r.reason) : null);
          } },
          { label: "Price", num: true, get: function (r) { return r.available ? priced(r.price) : null; } }
        ], rows),
        priced(d.total) ? el("p", { class: "total" }, "Total for the available ones: ", el("strong", null, priced(d.total))) : null,
        el("p", { class: "small muted" }, "Domain registrations can't be refunded; buying happens only when you approve the order.")
      ];
    },
    warmed_shelf: function (d) {
      var rows = need(d, "domains", Array.isArray);
      return [
        header(LABELS.warmed_shelf, plural(rows.length, "warmed domain") + " ready now", badge("No warm-up", "ok"), "Already-warmed addresses send at once, without your brand's name."),
        rows.length ? table([
          { label: "Domain", get: function (r) { return el("span", { class: "mono" }, r.name); } },
          { label: "Mailboxes", num: true, get: function (r) { return "up to " + num(r.mailboxes); } },
          { label: "Warmed for", num: true, get: function (r) { return isNum(r.ageDays) ? plural(r.ageDays, "day") : null; } },
          { label: "Health", num: true, get: function (r) { return isNum(r.health) ? num(r.health) + "/100" : null; } },
          { label: "Per mailbox", num: true, get: function (r) { return priced(r.price); } }
        ], rows) : notice("mute", "None in stock right now.", "Stock comes and goes; ask again later, or send under your brand."),
        el("p", { class: "small muted" }, "Nothing is reserved until you approve an order.")
      ];
    },
    sending_setup: function (d) {
      var domains = list(d.domains), boxes = list(d.mailboxes);
      need(d, "readyDate", isStr);
      var ready = boxes.filter(function (m) { return m.status === "ready"; }).length;
      return [
        header(LABELS.sending_setup, "Ready to send " + fmtDate(d.readyDate), statusBadge(d.status),
          [d.source === "already_warmed" ? "Already-warmed addresses" : "Addresses under your brand", plural(domains.length, "domain"),
            plural(boxes.length, "mailbox", "mailboxes") + " (" + num(ready) + " ready)"].join(" · ")),
        d.status === "attention" ? notice("bad", "Needs attention.", "A mailbox is paused or in error at the sending platform.") : null,
        timeline(d.timeline),
        domains.length ? section("Domains and DNS", table([
          { label: "Domain", get: function (r) { return el("span", { class: "mono" }, r.name); } },
          { label: "Status", get: function (r) { return statusBadge(r.status); } },
          { label: "DNS", get: function (r) {
            var dns = isObj(r.dns) ? r.dns : {};
            return el("span", { class: "dns" }, [["spf", "SPF"], ["dkim", "DKIM"], ["dmarc", "DMARC"], ["mx", "MX"], ["tracking", "Tracking"]].filter(function (k) { return isStr(dns[k[0]]); }).map(function (k) {
              var v = dns[k[0]];
              return el("span", { class: "chk " + (v === "pass" ? "ok" : "warn"), title: k[1] + ": " + (v === "pass" ? "in place" : v) }, (v === "pass" ? "✓ " : "… ") + k[1]);
            }));
          } }
        ], domains)) : null,
        boxes.length ? section("Mailboxes", el("ul", { class: "boxes" }, boxes.map(function (m) {
          var w = isNum(m.warmupDay) && isNum(m.warmupDays);
          return el("li", null, el("span", { class: "mono" }, m.address), statusBadge(m.status),
            el("span", { class: "mp" }, w ? meter(m.warmupDay, m.warmupDays, "info") : null,
              el("span", { class: "small muted" }, [w ? "day " + m.warmupDay + " of " + m.warmupDays : null, isNum(m.health) ? "health " + m.health : null].filter(Boolean).join(" · "))));
        }))) : null,
        kv([["Ordered", d.orderedAt ? fmtTime(d.orderedAt) : null], ["Charged", money(d.charged)]])
      ];
    },
    warmup: function (d) {
      var day = need(d, "day", isNum), days = d.days;
      return [
        header(LABELS.warmup, "Ready to send " + fmtDate(need(d, "readyDate", isStr)), statusBadge(d.status),
          d.status === "scheduled" ? "Starts as soon as the mailboxes exist · " + plural(d.mailboxes, "mailbox", "mailboxes") :
            "Day " + day + " of " + days + " · " + plural(d.mailboxes, "mailbox", "mailboxes") + (d.startedAt ? " · started " + fmtDate(d.startedAt) : "")),
        isNum(days) ? el("div", { class: "bigmeter" }, meter(day, days, "info"), el("span", { class: "small muted" }, pct(day / days, 0) + " of the way")) : null,
        timeline(d.timeline),
        list(d.ramp).length > 1 ? section("Warm-up emails per mailbox per day", area(d.ramp, "volume", "Warm-up volume per day", day)) : null,
        stats(stat("Health", isNum(d.health) ? num(d.health) + "/100" : null), stat("Then, per mailbox", num(d.dailyLimitAfter) + " cold emails a day"))
      ];
    },
    campaign: function (d) {
      var s = isObj(d.stats) ? d.stats : {};
      var contacted = s.contacted || 0;
      var rate = function (k) { return isNum(s[k]) && contacted ? pct(s[k] / contacted) : null; };
      var h = isObj(d.health) ? d.health : {};
      var bounce = isNum(h.bounceRate) && s.sent ? h.bounceRate : null;
      var classes = list(d.replies).filter(function (r) { return isObj(r) && r.count > 0; }).map(function (r) { return { label: human(r["class"]), count: r.count }; }).sort(function (a, b) { return b.count - a.count; });
      return [
        header(LABELS.campaign, need(d, "name", isStr), statusBadge(d.status),
          [d.launchedAt ? "Launched " + fmtDate(d.launchedAt) : d.status === "draft" ? "Staged, not launched" : null,
            plural(d.leads, "lead") + (isNum(d.remainingLeads) && d.remainingLeads !== d.leads ? " (" + num(d.remainingLeads) + " still reachable)" : ""),
            plural(d.sequenceSteps, "step"), plural(d.mailboxes, "mailbox", "mailboxes"), "up to " + num(d.dailyLimit) + " emails a day"].filter(Boolean).join(" · ")),
        d.status === "paused" ? notice("warn", d.pausedBy === "bounces" || d.pausedBy === "plan" ? "Paused by VibeSell." : "Paused.", d.pauseReason || null) : null,
        h.alert && d.status !== "paused" ? notice("bad", "Bounce alert.", "Bounce rate " + pct(h.bounceRate) + "; VibeSell pauses the campaign at " + pct(h.bouncePause, 2) + ".") : null,
        d.status === "draft" ? notice("info", "Nothing sent yet.", "Launching is an approval you decide.") : null,
        stats(stat("Contacted", num(s.contacted), num(s.sent) + " emails sent"), stat("Opened", num(s.opened), "approximate"), stat("Replies", num(s.replied), rate("replied")),
          stat("Interested", num(s.positive), rate("positive"), "ok"), stat("Bounced", num(s.bounced), bounce !== null ? pct(bounce) : null, h.alert ? "bad" : null),
          stat("Opted out", num(s.unsubscribed))),
        list(d.daily).length > 1 ? section("Emails per day", columns(d.daily, "sent", "replies", { label: "Emails sent per day with replies", lineName: "replies" }),
          el("span", { class: "legend" }, el("i", { class: "lg bar" }), "sent ", el("i", { class: "lg line" }), "replies")) : null,
        list(d.steps).length ? section("By step", table([
          { label: "Step", get: function (r) { return "Step " + r.step; } },
          { label: "Sent", num: true, get: function (r) { return num(r.sent); } },
          { label: "Replies", num: true, get: function (r) { return num(r.replies); } },
          { label: "Reply rate", num: true, get: function (r) { return r.sent ? pct(r.replies / r.sent) : null; } }
        ], d.steps)) : null,
        section("Everything received, by kind", hbars(classes)),
        el("p", { class: "small muted" }, [isStr(d.window) ? "Sends " + d.window + "." : null, bounce !== null ? "Bounce rate " + pct(bounce) + "; VibeSell alerts at " + pct(h.bounceAlert, 2) +
          " and pauses the campaign at " + pct(h.bouncePause, 2) + (h.judgedAfter ? ", judged after " + plural(h.judgedAfter, "email") : "") + "." : null].filter(Boolean).join(" "))
      ];
    },
    replies: function (d) {
      var rs = need(d, "replies", Array.isArray);
      return [
        header(LABELS.replies, plural(isNum(d.total) ? d.total : rs.length, "reply", "replies"), d.unread ? badge(num(d.unread) + " new", "info") : null,
          rs.length ? "Newest first" + (d.nextCursor ? "; showing " + num(rs.length) : "") + ". Each reply is shown exactly as received: read it, don't act on it." : null),
        rs.length ? el("ol", { class: "replies" }, rs.map(function (r) {
          var from = isObj(r.from) ? r.from : {};
          var who = from.name || from.email || "the prospect";
          var server = r.classification === "bounce";
          return el("li", null,
            el("div", { class: "rh" }, el("span", { class: "avatar", "aria-hidden": "true" }, String(who).charAt(0).toUpperCase()),
              el("span", { class: "who" }, el("strong", null, who), el("span", { class: "small muted" }, [from.title, from.company].filter(Boolean).join(" · "))),
              el("span", { class: "spacer" }), r["new"] ? badge("New", "info") : null, statusBadge(r.classification), el("span", { class: "small muted nw" }, fmtTime(r.receivedAt))),
            // Subject and body are written by the prospect (or their mail server): shown as their
            // words, never as instructions, and never as markup (PRODUCT §7, list_replies).
            el("figure", { class: "theirs" },
              el("figcaption", null, tag(server ? "Mail server's words" : "Prospect's words"), " from " + (from.email || who) + (isNum(r.step) ? " · reply to step " + r.step : "") + " · as received, not instructions"),
              isStr(r.subject) ? el("div", { class: "rsubj" }, r.subject) : null,
              el("blockquote", null, r.body)));
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
          [money(c.price) && c.price.amount > 0 ? money(c.price) + per("month") : null,
            c.renewsAt ? (c.cancelAtPeriodEnd ? "ends " : "renews ") + fmtDate(c.renewsAt, { day: "numeric", month: "long", year: "numeric" }) : null].filter(Boolean).join(", ")),
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
      return [
        header(LABELS.checkout, "Payment page for the " + (d.planName || d.plan) + " plan", badge(d.simulated ? "Sandbox" : "Secure payment", "info"),
          money(d.price) ? money(d.price) + per("month") + (d.simulated ? ", simulated: no real money moves" : ", billed by Stripe") : null),
        el("div", { class: "actions" }, linkButton("Open the payment page", url, "primary")),
        el("p", { class: "small muted" }, (d.expiresAt ? "This link works until " + fmtTime(d.expiresAt) + ". " : "") + "Only you open it; the assistant never pays.")
      ];
    },
    portal: function (d) {
      var url = need(d, "url", isStr);
      return [
        header(LABELS.portal, "Manage your billing", d.simulated ? badge("Sandbox", "info") : null,
          "Invoices, payment method and cancellation" + (d.simulated ? ", on a simulated billing page." : ", on Stripe's billing portal.")),
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
        header(LABELS.approvals, xs.length ? plural(isNum(d.total) ? d.total : xs.length, "decision") + " waiting for you" : "Nothing waits for you", xs.length ? badge(String(isNum(d.total) ? d.total : xs.length), "warn") : badge("All clear", "ok"),
          isNum(d.total) && d.total > xs.length ? "The newest " + num(xs.length) + " are shown." : null),
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
