// A task: its timeline and what to do with it.

import {h} from "./util.js";

export function mount(main, agent, id) {
  main.append(h("h1", {}, agent + " · " + id));
  return () => {};
}
