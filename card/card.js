// The VibeSell card: an MCP App view (MCP Apps 2026-01-26). It talks to its host over
// postMessage JSON-RPC, renders the tool result by its `kind`, and never reaches the network.
(function () {
  "use strict";
  var PROTOCOL = "2026-01-26";
  var root = document.getElementById("root");
  var nextId = 1;
  var pending = {};

  // ---- host bridge -------------------------------------------------------------------------
  function send(msg) { window.parent.postMessage(msg, "*"); }
  function request(method, params) {
    var id = nextId++;
    send({ jsonrpc: "2.0", id: id, method: method, params: params || {} });
    return new Promise(function (resolve, reject) { pending[id] = { resolve: resolve, reject: reject }; });
  }
  function notify(method, params) { send({ jsonrpc: "2.0", method: method, params: params || {} }); }
  function reply(id, result) { send({ jsonrpc: "2.0", id: id, result: result }); }
  function replyError(id, code, message) { send({ jsonrpc: "2.0", id: id, error: { code: code, message: message } }); }

  window.addEventListener("message", function (event) {
    if (event.source !== window.parent) return; // only our host may talk to us
    var msg = event.data;
    if (!msg || msg.jsonrpc !== "2.0") return;
    if (msg.id !== undefined && msg.method === undefined) {
      var p = pending[msg.id];
      if (!p) return;
      delete pending[msg.id];
      if (msg.error) p.reject(msg.error); else p.resolve(msg.result);
      return;
    }
    if (msg.id !== undefined) return onRequest(msg);
    onNotification(msg);
  });

  function onRequest(msg) {
    switch (msg.method) {
      case "ui/resource-teardown": return reply(msg.id, {});
      case "ping": return reply(msg.id, {});
      default: return replyError(msg.id, -32601, "Method not found: " + msg.method);
    }
  }

  function onNotification(msg) {
    var params = msg.params || {};
    switch (msg.method) {
      case "ui/notifications/tool-input": return showWorking();
      case "ui/notifications/tool-result": return renderResult(params);
      case "ui/notifications/tool-cancelled": return render(el("p", { class: "muted" }, "Cancelled."));
      case "ui/notifications/host-context-changed": return applyContext(params);
    }
  }

  // ---- theme and size ----------------------------------------------------------------------
  function applyContext(ctx) {
    if (!ctx) return;
    if (ctx.theme) document.documentElement.setAttribute("data-theme", ctx.theme);
    var vars = ctx.styles && ctx.styles.variables;
    if (vars) Object.keys(vars).forEach(function (k) {
      if (k.indexOf("--") === 0 && vars[k]) document.documentElement.style.setProperty(k, vars[k]);
    });
  }
  var lastSize = "";
  function reportSize() {
    var w = Math.ceil(document.documentElement.scrollWidth);
    var h = Math.ceil(document.documentElement.scrollHeight);
    var key = w + "x" + h;
    if (key === lastSize) return;
    lastSize = key;
    notify("ui/notifications/size-changed", { width: w, height: h });
  }
  if (typeof ResizeObserver === "function") new ResizeObserver(reportSize).observe(document.documentElement);

  // ---- DOM helpers (text only: no innerHTML, so result text can never become markup) -------
  function el(tag, attrs) {
    var node = document.createElement(tag);
    if (attrs) Object.keys(attrs).forEach(function (k) { node.setAttribute(k, attrs[k]); });
    for (var i = 2; i < arguments.length; i++) append(node, arguments[i]);
    return node;
  }
  function append(node, child) {
    if (child === null || child === undefined || child === false) return;
    if (Array.isArray(child)) return child.forEach(function (c) { append(node, c); });
    node.appendChild(typeof child === "object" ? child : document.createTextNode(String(child)));
  }
  function render() {
    root.textContent = "";
    for (var i = 0; i < arguments.length; i++) append(root, arguments[i]);
    reportSize();
  }
  function field(label, value) {
    if (value === undefined || value === null || value === "") return null;
    return el("div", { class: "field" }, el("div", { class: "label" }, label), el("div", { class: "value" }, value));
  }
  function badge(text, tone) { return el("span", { class: "badge" + (tone ? " " + tone : "") }, text); }
  function when(ms) { try { return new Date(ms).toLocaleString(); } catch (e) { return String(ms); } }

  // ---- results -----------------------------------------------------------------------------
  function showWorking() { render(el("p", { class: "muted" }, "Working…")); }

  function dataOf(result) {
    if (result.structuredContent) return result.structuredContent;
    // Hosts on protocol versions before 2025-06-18 get the JSON as a second text block.
    var blocks = result.content || [];
    for (var i = blocks.length - 1; i >= 0; i--) {
      if (blocks[i].type !== "text") continue;
      try { var v = JSON.parse(blocks[i].text); if (v && typeof v === "object" && v.kind) return v; } catch (e) { /* prose */ }
    }
    return null;
  }

  function renderResult(result) {
    if (result.isError) {
      var text = (result.content || []).map(function (b) { return b.text || ""; }).join("\n");
      return render(el("h2", null, "Not done ", badge("refused", "bad")), el("p", { class: "error" }, text));
    }
    var data = dataOf(result);
    if (!data) return render(el("p", { class: "muted" }, "No details to show."));
    var view = VIEWS[data.kind] || generic;
    render(view(data));
  }

  var VIEWS = {
    workspace: function (d) {
      var steps = (d.journey || []).map(function (s) {
        return el("li", { class: s.status, title: s.status }, (s.status === "done" ? "✓ " : "") + s.title);
      });
      return [
        el("h2", null, "Your VibeSell workspace"),
        d.offer ? el("p", { class: "muted" }, d.offer.product + " — " + d.offer.description) : el("p", { class: "muted" }, "No offer saved yet."),
        el("h3", null, "Journey"),
        el("ol", { class: "journey" }, steps),
        d.nextStep ? el("div", { class: "next" }, el("strong", null, "Next: " + d.nextStep.title), el("p", { class: "muted" }, d.nextStep.why)) : null,
        d.memories && d.memories.length ? [el("h3", null, "Remembered"), el("ul", { class: "plain" }, d.memories.map(function (m) {
          return el("li", null, m.topic ? el("strong", null, m.topic + ": ") : null, m.note);
        }))] : null
      ];
    },
    offer: function (d) {
      return [
        el("h2", null, d.product, badge("offer saved", "ok")),
        el("p", null, d.description),
        el("h3", null, "Pitch"),
        el("div", { class: "grid" },
          field("Value", d.valueProposition), field("Company", d.companyName), field("Website", d.website),
          field("Pricing", d.pricing), field("Call to action", d.callToAction), field("Postal address", d.postalAddress)),
        d.proofPoints && d.proofPoints.length ? [el("h3", null, "Proof points"), el("ul", { class: "plain" }, d.proofPoints.map(function (p) { return el("li", null, p); }))] : null
      ];
    },
    memory: function (d) {
      return [
        el("h2", null, "Remembered", badge(d.replaced ? "updated" : "saved", "ok")),
        el("p", null, d.topic ? el("strong", null, d.topic + ": ") : null, d.note),
        el("p", { class: "muted" }, d.total + " note" + (d.total === 1 ? "" : "s") + " in this workspace · " + when(d.savedAt))
      ];
    }
  };

  function generic(d) {
    var rows = Object.keys(d).filter(function (k) { return k !== "kind"; }).map(function (k) {
      var v = d[k];
      return field(k, typeof v === "object" ? JSON.stringify(v) : v);
    });
    return [el("h2", null, d.kind.replace(/_/g, " ")), el("div", { class: "grid" }, rows)];
  }

  // ---- handshake ---------------------------------------------------------------------------
  request("ui/initialize", {
    protocolVersion: PROTOCOL,
    appInfo: { name: "vibesell-card", version: "1" },
    appCapabilities: { availableDisplayModes: ["inline"] }
  }).then(function (res) {
    applyContext(res && res.hostContext);
    notify("ui/notifications/initialized", {});
    reportSize();
  }, function () {
    render(el("p", { class: "error" }, "This host did not accept the VibeSell card."));
  });
})();
