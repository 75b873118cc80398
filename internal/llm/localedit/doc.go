// Package localedit is the local provider's deterministic editor for
// Chinese and English text.
package localedit
