"use strict";
// The live view: the referee's boards from /events (server-sent events), drawn into the page.
// Each board's element carries data-board; its diagram carries data-ply.

const ALERTS = new Set(["ILLEGAL", "INCOMPLETE", "NO_BOARD", "UNREADABLE", "CAMERA_LOST", "SAME_NAME",
                        "NO_PICTURE", "LOG_FAILED", "MOVE_INCOMPLETE"]);
const GOOD = new Set(["ACCEPTED", "STARTED", "RESTORED", "CAMERA_BACK", "LOG_BACK"]);
const KEPT = 100; // happenings listed per board, as many as the referee keeps
const CAMERA_MS = {one: 250, many: 1000, missing: 2000};

const boards = new Map(); // board name -> Board
let ended = false;

function clock(seconds) {
  const whole = Math.max(0, Math.floor(seconds));
  return `${Math.floor(whole / 60)}:${String(whole % 60).padStart(2, "0")}`;
}

function boardUrl(name, file) {
  return `board/${encodeURIComponent(name)}/${file}`;
}

function recordFileName(name) { // as the server names it
  const safe = name.replace(/[^A-Za-z0-9._-]+/g, "-").replace(/^[-.]+|[-.]+$/g, "");
  return `${safe || "board"}.txt`;
}

class Board {
  constructor(name) {
    this.name = name;
    this.el = document.getElementById("board-template").content.firstElementChild.cloneNode(true);
    this.el.dataset.board = name;
    this.write("name", name);
    this.view = null;
    this.svg = null;
    this.seen = new Set(); // happenings shown: one may come both in a snapshot and after it
    this.kinds = new Map(); // a happening's words -> its kind, to colour the status by
    const link = this.part("download");
    link.href = boardUrl(name, "record.txt");
    link.download = recordFileName(name);
    placeSorted(this.el);
    this.camera = new Camera(this);
  }

  part(name) {
    return this.el.querySelector(`.${name}`);
  }

  write(name, text) {
    const part = this.part(name);
    if (part.textContent !== text) part.textContent = text;
    return part;
  }

  show(view) {
    this.view = view;
    this.write("title", view.title);
    this.write("players", `${view.players[0]} – ${view.players[1]}`);
    const diagram = this.part("diagram");
    if (view.diagram_svg !== this.svg) {
      this.svg = view.diagram_svg;
      diagram.innerHTML = view.diagram_svg; // the page's policy lets no script in it run
    }
    diagram.dataset.ply = String(view.ply); // after the drawing: a watcher sees it drawn
    this.write("turn", view.turn ?? "–");
    this.part("turn-row").hidden = Boolean(view.result);
    this.write("last-move", view.last_move ?? "–");
    this.write("score", view.score);
    this.part("score-row").hidden = !view.score;
    this.write("status", view.status);
    this.markStatus();
    this.write("result", view.result).hidden = !view.result;
    this.write("record", view.record);
    this.el.classList.toggle("over", Boolean(view.result));
  }

  showHappenings(happenings) {
    this.part("happenings").replaceChildren();
    this.seen.clear();
    this.kinds.clear();
    happenings.forEach((happening) => this.add(happening));
  }

  add(happening) {
    const key = JSON.stringify([happening.kind, happening.text, happening.time_s, happening.ply]);
    if (this.seen.has(key)) return;
    this.seen.add(key);
    const item = document.createElement("li");
    item.className = ALERTS.has(happening.kind) ? "alert" : GOOD.has(happening.kind) ? "good" : "";
    item.dataset.kind = happening.kind;
    const when = document.createElement("time");
    when.textContent = clock(happening.time_s);
    const what = document.createElement("span");
    what.textContent = happening.text;
    item.append(when, what);
    const list = this.part("happenings");
    list.prepend(item); // newest first
    while (list.children.length > KEPT) list.lastElementChild.remove();
    this.kinds.set(happening.text, happening.kind);
    this.markStatus();
  }

  markStatus() { // red where the players' latest word is a fault, whatever came after it
    const kind = this.view === null ? undefined : this.kinds.get(this.view.status);
    this.part("status").classList.toggle("alert", ALERTS.has(kind));
  }

  keepRecord() { // the server is gone: the download comes from the page itself
    if (this.view === null) return;
    const blob = new Blob([this.view.record], {type: "text/plain;charset=utf-8"});
    this.part("download").href = URL.createObjectURL(blob);
  }
}

// A few pictures a second while the page is seen; the next asked for only once one has come,
// so a slow link or a busy referee is never asked faster than it answers.
class Camera {
  constructor(board) {
    this.board = board;
    this.timer = null;
    this.paused = false;
    this.after(0);
  }

  after(ms) {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.fetch(), ms);
  }

  fetch() {
    if (ended) return;
    if (document.visibilityState !== "visible") {
      this.paused = true;
      return;
    }
    const next = new Image();
    next.onload = () => {
      const shown = this.board.part("camera");
      next.className = shown.className;
      next.alt = shown.alt;
      shown.replaceWith(next); // the loaded picture itself: no second fetch, no flicker
      this.after(boards.size > 1 ? CAMERA_MS.many : CAMERA_MS.one);
    };
    next.onerror = () => this.after(CAMERA_MS.missing);
    next.src = `${boardUrl(this.board.name, "camera.jpg")}?t=${Date.now()}`;
  }

  resume() {
    if (this.paused) {
      this.paused = false;
      this.after(0);
    }
  }
}

function placeSorted(element) {
  const main = document.getElementById("boards");
  const later = [...main.children].find((other) =>
    other.dataset.board.localeCompare(element.dataset.board, undefined, {numeric: true}) > 0);
  main.insertBefore(element, later ?? null);
}

function board(name) {
  let found = boards.get(name);
  if (found === undefined) {
    found = new Board(name);
    boards.set(name, found);
    document.body.classList.toggle("many", boards.size > 1);
    document.getElementById("waiting").hidden = true;
  }
  return found;
}

function tell(state, text) {
  document.getElementById("badge").textContent = state;
  document.body.dataset.connection = state;
  const line = document.getElementById("connection");
  line.dataset.state = state;
  line.textContent = text;
}

function snapshot(data) {
  for (const entry of data.boards) {
    const shown = board(entry.view.board);
    shown.show(entry.view);
    shown.showHappenings(entry.happenings);
  }
  tell("live", "");
}

function stopped(source) {
  ended = true;
  source.close();
  document.body.classList.add("stopped");
  tell("stopped", "The referee has stopped: this is the last it saw.");
  boards.forEach((shown) => shown.keepRecord());
}

function listen() {
  const source = new EventSource("events");
  const on = (name, handle) => source.addEventListener(name, (message) =>
    handle(JSON.parse(message.data)));
  on("snapshot", snapshot);
  on("view", (view) => board(view.board).show(view));
  on("happening", (happening) => board(happening.board).add(happening));
  on("end", () => stopped(source));
  source.onerror = () => {
    if (!ended) tell("lost", "Connection lost: trying again…");
  };
}

document.addEventListener("visibilitychange", () => {
  if (document.visibilityState === "visible") boards.forEach((shown) => shown.camera.resume());
});
listen();
