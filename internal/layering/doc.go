// Package layering holds the test of the house's one-way dependencies:
// no domain package (content, playground, lock, race, quiz, store, carry,
// and workshop, limit and lab once they exist) depends on the web layer,
// Echo or templ, directly or through another package; and the rules
// between the house's own rooms hold, tests included: web does not depend
// on the worker host (worker), and playground does not depend on lab. It
// has no code of its own.
package layering
