package persona

import (
	"context"
	"fmt"
	"strconv"

	"github.com/foliodev/folio/internal/errs"
	"github.com/foliodev/folio/internal/kv"
	"github.com/foliodev/folio/persona/learning"
	"github.com/foliodev/folio/persona/memory"
	"github.com/foliodev/folio/persona/source"
	"github.com/foliodev/folio/persona/style"
)

// SourceState is a source document's current state, as the content
// service and publishing see it.
type SourceState struct {
	// Pin is the published version (what a persona may learn from).
	Pin        source.Pin
	Published  bool
	Visibility string // public, private, password
}

// Sources is what generation reads of the content service. The
// integration implements it over the repository and the published refs.
type Sources interface {
	// Current returns doc's current state for user (errs.NotFound when
	// the document does not exist or user may not see it).
	Current(ctx context.Context, user, doc string) (SourceState, error)
	// Load returns the text of a pinned version.
	Load(ctx context.Context, pin source.Pin) (source.Document, error)
}

// GenerateRequest asks for a new persona version.
type GenerateRequest struct {
	User, Persona string
	// Key makes the generation idempotent (the durable task's id): a
	// repeat returns the version the first one made.
	Key string
	// Attempt is the task's attempt (for the prose's usage accounting).
	Attempt int
}

// MaxKeyLen bounds an idempotency key.
const MaxKeyLen = 128

// Generate builds a new version of a persona and activates it:
//
//  1. pin: each chosen source's current state (Sources.Current) must be
//     published; a private or password source needs a provider that
//     may receive it (llm.PrivateAllowed: the local one, or [privacy]
//     send_private_to_provider; else private_source_blocked), and feeds
//     memory only with private_memory as well (a note says so);
//  2. build, in order, from the pinned versions only: the style profile
//     (always; with a Describer's prose beside it when one is set and
//     its provider is not the local one), the learning snapshot (when [persona] learning is on;
//     from the observations obs reads, nil meaning none), the memory
//     snapshot (when [persona] memory is on; per-user observations of a
//     source version are read from the store or extracted once and
//     stored for every later persona and generation);
//  3. check again that no source moved (source_changed, a conflict);
//  4. one synced batch: the components, the observations extracted, the
//     version, the persona's active pointer and the memory index's
//     outbox entry.
//
// Any failure before step 4 writes nothing: the previous version stays
// active. Generations of one persona are serialized.
func (s *Service) Generate(ctx context.Context, req GenerateRequest, src Sources, obs learning.Reader) (Version, error) {
	if err := s.enabled(); err != nil {
		return Version{}, err
	}
	if len(req.Key) > MaxKeyLen {
		return Version{}, errs.E(errs.Invalid, "persona: idempotency key longer than %d bytes", MaxKeyLen)
	}
	defer s.lock(req.Persona)()
	p, err := s.load(req.User, req.Persona)
	if err != nil {
		return Version{}, err
	}
	if req.Key != "" {
		data, err := kv.Get(s.db, genKey(p.ID, req.Key))
		if err == nil {
			seq, _ := strconv.Atoi(string(data))
			return s.version(p, seq)
		}
		if err != kv.ErrNotFound {
			return Version{}, err
		}
	}
	if err := s.hook("start"); err != nil {
		return Version{}, err
	}
	// 1. Pin.
	var pins []SourcePin
	var notes []string
	for _, doc := range p.Sources {
		st, err := src.Current(ctx, p.User, doc)
		if err != nil {
			return Version{}, errWrap("persona: source "+doc, err)
		}
		if !st.Published || st.Pin.Version.IsZero() {
			return Version{}, errs.C(errs.Invalid, CodeSourceUnpublished, "persona: source %s is not published; publish it or remove it from the persona", doc)
		}
		private := st.Visibility == VisibilityPrivate || st.Visibility == VisibilityPassword
		if private && !s.PrivateAllowed() {
			return Version{}, errs.C(errs.Forbidden, CodePrivateSource,
				"persona: source %s is %s and the writing provider is external; using it needs [privacy] send_private_to_provider = true", doc, st.Visibility)
		}
		sp := SourcePin{Pin: st.Pin, Visibility: st.Visibility, Memory: s.sw.Memory && (!private || s.sw.PrivateMemory)}
		if s.sw.Memory && private && !s.sw.PrivateMemory {
			notes = append(notes, fmt.Sprintf("memory leaves out %s (%s): [privacy] private_memory is off", doc, st.Visibility))
		}
		pins = append(pins, sp)
	}
	docs := make([]source.Document, len(pins))
	for i, sp := range pins {
		d, err := src.Load(ctx, sp.Pin)
		if err != nil {
			return Version{}, errWrap("persona: load "+sp.Pin.String(), err)
		}
		if d.Pin.Doc != sp.Pin.Doc || d.Pin.Version != sp.Pin.Version {
			return Version{}, errs.E(errs.Corrupt, "persona: loading %s returned %s", sp.Pin, d.Pin)
		}
		docs[i] = d
	}
	// 2. Build.
	if err := s.hook("style"); err != nil {
		return Version{}, err
	}
	profile, err := style.BuildContext(ctx, docs)
	if ctxErr := ctx.Err(); ctxErr != nil {
		return Version{}, errWrap("persona: style profile", ctxErr)
	}
	if err != nil {
		return Version{}, errs.Wrap(errs.Invalid, fmt.Errorf("persona: style profile: %w", err))
	}
	profile, note, err := s.describe(ctx, DescribeRequest{User: p.User, Persona: p.ID, Key: req.Key, Attempt: req.Attempt}, profile)
	if err != nil {
		return Version{}, err
	}
	if note != "" {
		notes = append(notes, note)
	}
	v := Version{Persona: p.ID, User: p.User, Seq: p.Versions + 1, Sources: pins, Learner: style.LearnerVersion, Notes: notes,
		Key: req.Key, Created: s.now().UnixMilli()}
	v.ID = p.ID + "-v" + strconv.Itoa(v.Seq)
	var lsnap *learning.Snapshot
	if s.sw.Learning {
		if err := s.hook("learning"); err != nil {
			return Version{}, err
		}
		var os []learning.Observation
		if obs != nil {
			if os, err = learning.Collect(ctx, obs, p.User, p.ID, maxLearningObservations); err != nil {
				return Version{}, errWrap("persona: learning observations", err)
			}
		}
		l, err := learning.Build(p.User, p.ID, os)
		if err != nil {
			return Version{}, errs.Wrap(errs.Invalid, err)
		}
		lsnap = &l
		v.Evaluator = learning.EvaluatorVersion
	}
	var msnap *memory.Snapshot
	var newObs []observationSet
	if s.sw.Memory {
		if err := s.hook("memory"); err != nil {
			return Version{}, err
		}
		var in []memory.Input
		for i, sp := range pins {
			if !sp.Memory {
				continue
			}
			var set observationSet
			ok, err := kv.GetRecord(s.db, obsKey(p.User, sp.Pin.Version), &set)
			if err != nil {
				return Version{}, err
			}
			if err := ctx.Err(); err != nil {
				return Version{}, errWrap("persona: memory", err)
			}
			if !ok || set.Pin.Fingerprint != sp.Pin.Fingerprint {
				set = observationSet{User: p.User, Pin: sp.Pin, Extractor: memory.ExtractorVersion, Observations: memory.Observe(docs[i])}
				newObs = append(newObs, set)
			}
			in = append(in, memory.Input{Pin: sp.Pin, Private: sp.Visibility != VisibilityPublic, Observations: set.Observations})
		}
		m, err := memory.ProjectContext(ctx, p.User, p.ID, in)
		if ctxErr := ctx.Err(); ctxErr != nil {
			return Version{}, errWrap("persona: memory", ctxErr)
		}
		if err != nil {
			return Version{}, errs.Wrap(errs.Invalid, err)
		}
		msnap = &m
		v.Extractor = memory.ExtractorVersion
	}
	// 3. Nothing moved meanwhile.
	if err := s.hook("verify"); err != nil {
		return Version{}, err
	}
	for _, sp := range pins {
		st, err := src.Current(ctx, p.User, sp.Pin.Doc)
		if err != nil {
			return Version{}, errWrap("persona: source "+sp.Pin.Doc, err)
		}
		if !st.Published || !st.Pin.Same(sp.Pin) || st.Visibility != sp.Visibility {
			return Version{}, errs.C(errs.Conflict, CodeSourceChanged,
				"persona: source %s changed while the version was generated (pinned %s); generate again", sp.Pin.Doc, sp.Pin.Label)
		}
	}
	// 4. Activate everything at once.
	b := s.db.NewBatch()
	defer b.Close()
	if v.Style, err = putStyle(b, profile); err != nil {
		return Version{}, err
	}
	if lsnap != nil {
		if v.Learning, err = putLearning(b, *lsnap); err != nil {
			return Version{}, err
		}
	}
	if msnap != nil {
		if v.Memory, err = putMemory(s.db, b, *msnap); err != nil {
			return Version{}, err
		}
	}
	for _, set := range newObs {
		if err := kv.SetRecord(b, obsKey(set.User, set.Pin.Version), set); err != nil {
			return Version{}, err
		}
	}
	if err := kv.SetRecord(b, versionKey(p.ID, v.Seq), v); err != nil {
		return Version{}, err
	}
	if req.Key != "" {
		if err := b.Set(genKey(p.ID, req.Key), []byte(strconv.Itoa(v.Seq))); err != nil {
			return Version{}, err
		}
	}
	p.Active, p.Versions, p.Updated = v.Seq, v.Seq, v.Created
	if err := kv.SetRecord(b, personaKey(p.ID), p); err != nil {
		return Version{}, err
	}
	if err := s.hook("commit"); err != nil {
		return Version{}, err
	}
	if err := s.db.Apply(b, kv.Sync); err != nil {
		return Version{}, err
	}
	if s.idx != nil && msnap != nil {
		s.idx.Notify()
	}
	return v, nil
}

// maxLearningObservations bounds what one generation reads.
const maxLearningObservations = 100_000

func (s *Service) hook(stage string) error {
	if s.testHook == nil {
		return nil
	}
	return s.testHook(stage)
}
