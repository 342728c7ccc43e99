// Package layering holds the test of the house's one-way dependencies:
// no domain package (content, playground, lock, race, lab, quiz, workshop,
// limit, store, carry, progress) depends on the web layer, Echo or templ,
// directly or through another package; and the rules between the house's
// own rooms hold: web does not depend on the worker host (worker), tests
// included; playground does not depend on lab, tests included; and web's
// code does not depend on store (its tests may open one). It has no code
// of its own.
package layering
