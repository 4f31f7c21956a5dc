/*
 * Draws an npc_nb knowledge graph from its saved output (application/vnd.npc-nb.graph+json).
 *
 * The output holds data only (nodes, edges, their colours and shapes, the summary line);
 * the drawing library (vis-network) is bundled here, so a notebook does not carry it once
 * per graph and nothing is fetched from the network. Every string in the data is memory
 * or model text, hostile by rule: labels are drawn on the canvas as text, tooltips and
 * the summary are DOM text nodes (textContent), never HTML.
 */
import { Widget } from "@lumino/widgets";
import { DataSet, Network } from "vis-network/standalone";

export const MIME_TYPE = "application/vnd.npc-nb.graph+json";
const FALLBACK_FONT = "sans-serif";
const BOX_MARGIN = 6; // px of free canvas space kept around every category box
// Up to this many nodes a graph is small enough to be laid out until nothing drawn is
// hidden: no label over another node, no arrowhead over a concept (see separate()).
const SMALL_GRAPH = 80;
const SEPARATE_ROUNDS = 40;
const LABEL_HALO = 4; // px of background drawn around every label's letters

class GraphView extends Widget {
  constructor(options) {
    super();
    this._mimeType = options.mimeType;
    this._graph = null;
    this.network = null;
    this.addClass("npc-nb-graph");
  }

  renderModel(model) {
    this._graph = model.data[this._mimeType];
    if (this.isAttached) {
      this._draw();
    }
    return Promise.resolve();
  }

  onAfterAttach() {
    if (this._graph && !this.network) {
      this._draw();
    }
  }

  onResize() {
    if (this.network) {
      this.network.redraw();
    }
  }

  dispose() {
    this._destroyNetwork();
    super.dispose();
  }

  _draw() {
    this._destroyNetwork();
    const graph = this._graph;
    const canvas = document.createElement("div");
    canvas.className = "npc-nb-graph-canvas";
    canvas.style.height = `${Number(graph.height) || 640}px`;
    const summary = document.createElement("div");
    summary.className = "npc-nb-graph-summary";
    summary.textContent = String(graph.summary || "");
    this.node.replaceChildren(canvas, summary);
    this.node.dataset.state = "drawing";

    const font = uiFont(this.node);
    const nodes = new DataSet((graph.nodes || []).map((node) => visNode(node, font)));
    const ids = nodes.getIds();
    const edges = new DataSet(
      (graph.edges || []).map((edge, index) => visEdge(edge, index, ids, font)),
    );
    this.network = new Network(canvas, { nodes, edges }, networkOptions(font));
    this.node.npcNbNetwork = this.network; // for scripted inspection (the browser tests)
    this.network.once("stabilizationIterationsDone", () => this._settle(graph));
  }

  /* Freeze the layout once it has stabilised, with no label over a category box; a
   * small graph also with no label over another node and no arrowhead over a concept. */
  _settle(graph) {
    const network = this.network;
    network.setOptions({ physics: { enabled: false } });
    const nodes = graph.nodes || [];
    const boxes = nodes.filter((n) => n.kind === "category").map((n) => n.id);
    try {
      if (nodes.length <= SMALL_GRAPH) {
        separate(network, boxes); // reads vis-network internals (edge geometry)
      } else {
        clearBoxes(network, boxes);
      }
    } catch (error) {
      console.warn("npc-nb-graph: layout clean-up skipped", error); // the graph still draws
    }
    network.fit();
    this.node.dataset.state = "drawn";
  }

  _destroyNetwork() {
    if (this.network) {
      this.network.destroy();
      this.network = null;
    }
  }
}

/* The notebook's UI font and colours (CSS variables, so the theme's) as concrete values
 * for the canvas, which cannot read CSS. */
function uiFont(element) {
  const theme = getComputedStyle(element);
  const value = (name, fallback) => theme.getPropertyValue(name).trim() || fallback;
  return {
    face: value("--jp-ui-font-family", FALLBACK_FONT),
    color: value("--jp-ui-font-color1", "#000000"),
    background: value("--jp-layout-color0", "#ffffff"),
  };
}

function textTooltip(text) {
  const tip = document.createElement("div");
  tip.className = "npc-nb-graph-tooltip";
  tip.textContent = String(text);
  return tip;
}

function visNode(node, font) {
  return {
    id: String(node.id),
    label: String(node.label),
    title: textTooltip(node.title),
    shape: String(node.shape),
    color: String(node.color),
    size: Number(node.size),
    mass: node.kind === "category" ? 4 : 1,
    font: {
      face: font.face,
      color: font.color,
      size: node.kind === "memory" ? 11 : 13,
      // The halo (see networkOptions) only where the label is drawn on the canvas: a
      // box's label sits inside its own colour.
      strokeWidth: node.shape === "box" ? 0 : LABEL_HALO,
    },
  };
}

/* An edge's source and target are places in the node list. */
function visEdge(edge, index, ids, font) {
  return {
    id: index,
    from: ids[Number(edge.source)],
    to: ids[Number(edge.target)],
    label: String(edge.label || ""),
    title: textTooltip(edge.title),
    width: Number(edge.width) || 1,
    arrows: "to",
    font: { face: font.face, color: font.color, size: 11, strokeColor: font.background },
  };
}

function networkOptions(font) {
  return {
    autoResize: true,
    interaction: { hover: true, tooltipDelay: 150 },
    // A halo of the background around a label's letters (strokeWidth, per node): an
    // edge drawn under a label does not run through its words.
    nodes: { font: { face: font.face, multi: false, strokeColor: font.background } },
    edges: { smooth: { type: "continuous" }, color: { inherit: "from" } },
    physics: {
      solver: "forceAtlas2Based",
      forceAtlas2Based: { gravitationalConstant: -60, springLength: 110, avoidOverlap: 0.6 },
      stabilization: { iterations: 300, updateInterval: 50 },
    },
  };
}

/* Move every node whose drawing (label included) overlaps a category box out of it, by
 * the shortest step, until none does. A step can push a node into another box, which
 * the next round resolves; redrawing between rounds refreshes the drawn extents. */
function clearBoxes(network, boxes) {
  const isBox = new Set(boxes);
  const others = network.body.data.nodes.getIds().filter((id) => !isBox.has(id));
  for (let round = 0; round < 20; round++) {
    network.redraw();
    let moved = false;
    for (const box of boxes) {
      const area = grow(network.getBoundingBox(box), BOX_MARGIN);
      for (const id of others) {
        const drawn = { ...network.getBoundingBox(id) };
        if (overlaps(area, drawn)) {
          const step = shortestStepOut(area, drawn);
          const at = network.getPosition(id);
          network.moveNode(id, at.x + step.x, at.y + step.y);
          moved = true;
        }
      }
    }
    if (!moved) {
      return;
    }
  }
}

/* Move nodes until, in this small graph, nothing drawn hides anything else: no node's
 * drawing (its label included) overlaps another's, and no arrowhead or edge label lies
 * on a node the edge does not join (vis-network draws both over the nodes). Category
 * boxes stay put and others move out of them; of two other nodes, the later one moves,
 * by the shortest step. A step can cause another overlap, which a later round resolves. */
function separate(network, boxes) {
  const isBox = new Set(boxes);
  const ids = network.body.data.nodes.getIds();
  for (let round = 0; round < SEPARATE_ROUNDS; round++) {
    network.redraw();
    const extents = new Map(ids.map((id) => [id, grow(network.getBoundingBox(id), BOX_MARGIN)]));
    const moved = new Set();
    const moveOut = (id, area) => {
      const step = shortestStepOut(area, extents.get(id));
      const at = network.getPosition(id);
      network.moveNode(id, at.x + step.x, at.y + step.y);
      extents.set(id, shift(extents.get(id), step));
      moved.add(id);
    };
    for (let i = 0; i < ids.length; i++) {
      for (let j = i + 1; j < ids.length; j++) {
        const [still, mover] = isBox.has(ids[j]) ? [ids[j], ids[i]] : [ids[i], ids[j]];
        if (!isBox.has(mover) && overlaps(extents.get(still), extents.get(mover))) {
          moveOut(mover, extents.get(still));
        }
      }
    }
    for (const arrow of [...arrowheads(network), ...edgeLabels(network)]) {
      for (const id of ids) {
        const joined = id === arrow.from || id === arrow.to;
        if (!joined && !isBox.has(id) && overlaps(arrow.area, extents.get(id))) {
          moveOut(id, arrow.area);
        }
      }
    }
    if (!moved.size) {
      return;
    }
  }
}

/* Where each edge's arrowhead is drawn: the square around the point where the edge
 * meets its target's border, as wide as the arrow is long (15 px and 3 line widths,
 * vis-network's own arrow length) in every direction. */
function arrowheads(network) {
  const ctx = network.canvas.frame.canvas.getContext("2d");
  const found = [];
  for (const edge of Object.values(network.body.edges)) {
    if (!edge.connected || edge.from === edge.to) {
      continue;
    }
    const via = edge.edgeType._getViaCoordinates();
    const tip = edge.edgeType._findBorderPosition(edge.to, ctx, { via });
    const size = 15 + 3 * (Number(edge.options.width) || 1);
    const area = { left: tip.x - size, right: tip.x + size, top: tip.y - size, bottom: tip.y + size };
    found.push({ from: edge.fromId, to: edge.toId, area });
  }
  return found;
}

/* Where each written edge label is drawn (as of the last redraw), with its edge's ends. */
function edgeLabels(network) {
  const found = [];
  for (const edge of Object.values(network.body.edges)) {
    const size = edge.labelModule && edge.labelModule.size;
    if (edge.connected && edge.options.label && size && size.width) {
      const area = grow(
        { left: size.left, right: size.left + size.width, top: size.top, bottom: size.top + size.height },
        2,
      );
      found.push({ from: edge.fromId, to: edge.toId, area });
    }
  }
  return found;
}

function shift(box, step) {
  return {
    left: box.left + step.x,
    right: box.right + step.x,
    top: box.top + step.y,
    bottom: box.bottom + step.y,
  };
}

function shortestStepOut(area, drawn) {
  const steps = [
    { x: area.right - drawn.left + 1, y: 0 },
    { x: area.left - drawn.right - 1, y: 0 },
    { x: 0, y: area.bottom - drawn.top + 1 },
    { x: 0, y: area.top - drawn.bottom - 1 },
  ];
  const length = (step) => Math.abs(step.x) + Math.abs(step.y);
  return steps.reduce((best, step) => (length(step) < length(best) ? step : best));
}

function grow(box, by) {
  return { left: box.left - by, right: box.right + by, top: box.top - by, bottom: box.bottom + by };
}

function overlaps(a, b) {
  return a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
}

const rendererFactory = {
  safe: true, // the data is rendered as text only, so untrusted (reopened) notebooks draw it
  mimeTypes: [MIME_TYPE],
  defaultRank: 0, // before the static image/png fallback in the same output
  createRenderer: (options) => new GraphView(options),
};

const extension = {
  id: "npc-nb-graph:renderer",
  rendererFactory,
  rank: 0,
  dataType: "json",
};

export default extension;
