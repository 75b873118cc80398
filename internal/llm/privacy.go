package llm

// LocalName is the Name of the local provider, which runs in the process
// and never sends what it is given anywhere.
const LocalName = "local"

// External reports whether p sends the text it is given out of the
// process: every provider but the local one. A nil provider (none known)
// counts as external, so that not knowing never lets private text out.
func External(p Provider) bool { return p == nil || p.Name() != LocalName }

// PrivateAllowed is Folio's one rule for private and password-protected
// content and a model provider, applied by every feature that hands an
// article to a provider (the attributes assistant, persona generation
// and persona runs): the content may be given to p when p does not send
// it out of the process (the local provider), or when the deployment
// allows sending private content ([privacy] send_private_to_provider,
// sendPrivate).
func PrivateAllowed(p Provider, sendPrivate bool) bool { return sendPrivate || !External(p) }
