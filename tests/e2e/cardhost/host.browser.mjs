// The browser side of the card test host: a real MCP Apps host built on the host bridge of
// @modelcontextprotocol/ext-apps (AppBridge + PostMessageTransport), the same code a host
// application embeds. It puts the card in a sandboxed iframe (opaque origin, scripts only),
// answers the view's requests, and records every frame the card sends, so the Node side can
// check the protocol exactly. Tool calls the card makes are handed to Node (`vsCallTool`,
// exposed by Playwright), which forwards them to the running Worker or answers them itself.
import { AppBridge, PostMessageTransport } from "@modelcontextprotocol/ext-apps/app-bridge";
import { z } from "zod";

const HOST_INFO = { name: "vibesell-test-host", version: "1.0.0" };
const HOST_CAPABILITIES = { openLinks: {}, serverTools: {}, message: { text: {} }, updateModelContext: { text: {} }, logging: {} };

// `refused`: the requests this host answers with `isError: true` (ui/message, ui/open-link), as a
// host does that does not deliver a message or whose link policy refuses an address.
const state = { bridge: null, iframe: null, context: {}, frames: [], events: [], refused: new Set() };

// Every JSON-RPC frame the card posts to us, in order, exactly as sent.
window.addEventListener("message", (event) => {
  if (state.iframe && event.source === state.iframe.contentWindow && event.data && event.data.jsonrpc === "2.0") {
    state.frames.push(structuredClone(event.data));
  }
});

function record(type, params) {
  state.events.push({ type, params: structuredClone(params ?? {}) });
}

async function load(html, { hostContext, width = 640 } = {}) {
  await unload();
  const box = document.getElementById("chat");
  const iframe = document.createElement("iframe");
  iframe.setAttribute("sandbox", "allow-scripts");
  iframe.setAttribute("title", "VibeSell");
  iframe.style.width = `${width}px`;
  iframe.style.height = "0px"; // as real hosts do: no size until the view reports one
  box.textContent = "";
  box.appendChild(iframe);
  state.iframe = iframe;
  state.frames = [];
  state.events = [];
  state.refused.clear();

  state.context = hostContext ?? {};
  const bridge = new AppBridge(null, HOST_INFO, HOST_CAPABILITIES, { hostContext: state.context });
  state.bridge = bridge;
  bridge.oncalltool = async (params) => {
    record("tools/call", params);
    return window.vsCallTool(params);
  };
  bridge.onmessage = async (params) => {
    record("ui/message", params);
    return state.refused.has("ui/message") ? { isError: true } : {};
  };
  bridge.onupdatemodelcontext = async (params) => {
    record("ui/update-model-context", params);
    return {};
  };
  bridge.onopenlink = async (params) => {
    record("ui/open-link", params);
    return state.refused.has("ui/open-link") ? { isError: true } : {};
  };
  bridge.addEventListener("sizechange", (params) => {
    record("size-changed", params);
    if (params.height != null) iframe.style.height = `${params.height}px`;
  });
  const initialized = new Promise((resolve) => {
    bridge.oninitialized = () => {
      record("initialized", {});
      resolve();
    };
  });
  await bridge.connect(new PostMessageTransport(iframe.contentWindow, iframe.contentWindow));
  iframe.srcdoc = html;
  await initialized;
  return { appCapabilities: bridge.getAppCapabilities(), appInfo: bridge.getAppVersion() };
}

async function unload() {
  if (!state.bridge) return;
  try {
    await state.bridge.close();
  } catch {
    /* already closed */
  }
  state.bridge = null;
  state.iframe?.remove();
  state.iframe = null;
}

window.vsHost = {
  load,
  unload,
  refuse: (method) => state.refused.add(method),
  frames: () => state.frames,
  events: () => state.events,
  frameHeight: () => state.iframe.getBoundingClientRect().height,
  setTheme(theme) {
    document.documentElement.dataset.theme = theme;
  },
  sendToolInput: (args) => state.bridge.sendToolInput({ arguments: args }),
  sendToolResult: (result) => state.bridge.sendToolResult(result),
  sendToolCancelled: (reason) => state.bridge.sendToolCancelled({ reason }),
  // setHostContext sends the view only what changed (ui/notifications/host-context-changed).
  changeHostContext(ctx) {
    state.context = { ...state.context, ...ctx };
    state.bridge.setHostContext(state.context);
  },
  teardown: () => state.bridge.teardownResource({}),
  ping: () => state.bridge.request({ method: "ping", params: {} }),
  // A request the card does not implement: it must answer -32601, not stay silent.
  unknownRequest: () =>
    state.bridge.request({ method: "ui/unknown-test-method", params: {} }, z.object({}).passthrough()).then(
      (r) => ({ result: r }),
      (e) => ({ error: { code: e.code, message: e.message } }),
    ),
};
