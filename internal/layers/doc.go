// Package layers holds the test that keeps a2aflow's imports running one
// way, down: it reads the table of layers in docs/architecture.md ("The
// layers") and the imports of every package of the module (go list), and
// fails when a package imports one of a layer above its own, or is in no
// layer. The documentation is the table: a change to the layers is a
// change to that page.
//
// Its size tests hold the limits of the same page: no function longer than
// 100 lines, no package folder with more than 12% of the module's lines
// (non-test, non-generated Go outside tests/, examples/, bench/ and
// deploy/).
package layers
