package memory

import (
	_ "embed"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/foliodev/folio/persona/source"
)

// ExtractorVersion names the local extraction rules. Observations record
// it; a source version is extracted again only when it changes.
const ExtractorVersion = "folio-memory/1"

// Fact types, in the order the extractor prefers them.
const (
	TypeBirth     = "birth"
	TypeEducation = "education"
	TypeWork      = "work"
	TypeResidence = "residence"
	TypeIdentity  = "identity"
	TypeEvent     = "event"
	TypeQuantity  = "quantity"
)

// Time precisions.
const (
	PrecisionYear     = "year"
	PrecisionMonth    = "month"
	PrecisionDay      = "day"
	PrecisionRelative = "relative" // 去年, last year: relative to when the source was written
)

// Time is when a fact happened: Value is "2019", "2019-03", "2019-03-05"
// or, for a relative time, the words as written.
type Time struct {
	Value     string `json:"value" msgpack:"v"`
	Precision string `json:"precision" msgpack:"p"`
}

// Number is a quantity: Value in decimal digits, Unit as written after
// it ("年", "%", "years").
type Number struct {
	Value string `json:"value" msgpack:"v"`
	Unit  string `json:"unit,omitempty" msgpack:"u,omitempty"`
}

// Fact is a first-person statement with its anchors, found in one
// sentence.
type Fact struct {
	Type      string      `json:"type" msgpack:"type"`
	Statement string      `json:"statement" msgpack:"stmt"`
	Span      source.Span `json:"span" msgpack:"span"` // of the sentence, in the text given
	Time      *Time       `json:"time,omitempty" msgpack:"time,omitempty"`
	Places    []string    `json:"places,omitempty" msgpack:"places,omitempty"`
	Orgs      []string    `json:"orgs,omitempty" msgpack:"orgs,omitempty"`
	Numbers   []Number    `json:"numbers,omitempty" msgpack:"nums,omitempty"`
	Role      string      `json:"role,omitempty" msgpack:"role,omitempty"`
	// Negated, Hedged and Planned mark statements memory never keeps
	// (Extract drops them; Claims keeps them for grounding).
	Negated bool `json:"negated,omitempty" msgpack:"-"`
	Hedged  bool `json:"hedged,omitempty" msgpack:"-"`
	Planned bool `json:"planned,omitempty" msgpack:"-"`
}

// Anchors reports whether f names any time, place, organisation, number
// or role.
func (f Fact) Anchors() bool {
	return f.Time != nil || len(f.Places) > 0 || len(f.Orgs) > 0 || len(f.Numbers) > 0 || f.Role != ""
}

// Extract returns the first-person facts of text that memory may keep:
// sentences in the first person with at least one anchor, neither
// negated, hedged nor planned.
func Extract(text string) []Fact {
	var out []Fact
	for _, f := range Claims(text) {
		if !f.Negated && !f.Hedged && !f.Planned {
			out = append(out, f)
		}
	}
	return out
}

// Claims returns every first-person sentence of text with at least one
// anchor, negated, hedged and planned ones included and marked: what a
// grounding check must find support for.
func Claims(text string) []Fact {
	rs := []rune(text)
	var out []Fact
	for _, s := range source.Sentences(text) {
		sent := string(rs[s.Start:s.End])
		if !firstPerson(sent) {
			continue
		}
		f := analyse(sent)
		if !f.Anchors() {
			continue
		}
		f.Statement, f.Span = sent, s
		out = append(out, f)
	}
	return out
}

// --- first person, negation, hedges, plans ---

var (
	fpEN = map[string]bool{"i": true, "me": true, "my": true, "we": true, "us": true, "our": true,
		"i'm": true, "i've": true, "i'd": true, "we're": true, "we've": true, "myself": true, "ourselves": true}
	negZH   = []string{"不是", "没", "从未", "从不", "并未", "未曾", "不曾", "并非", "不再", "不在", "不会"}
	negEN   = []string{"not", "never", "no longer", "neither", "nor"}
	hedgeZH = []string{"可能", "也许", "大概", "或许", "好像", "似乎", "估计", "我觉得", "我想", "我猜", "据说", "应该是", "差不多", "说不定"}
	hedgeEN = []string{"might", "maybe", "perhaps", "probably", "possibly", "i think", "i guess", "i believe", "i suppose",
		"seems", "seemed", "apparently", "not sure", "could"}
	planZH = []string{"打算", "计划", "准备", "将要", "将会", "想要", "希望", "明年", "下个月", "下周", "以后要", "未来", "要去", "会去", "即将"}
	planEN = []string{"plan", "plans", "planning", "will", "going to", "intend", "intends", "hope to", "want to",
		"would like", "next year", "next month", "someday", "'ll"}
)

// words returns the Latin words of s, lowercase, apostrophes kept.
func words(s string) []string {
	return strings.FieldsFunc(strings.ToLower(strings.ReplaceAll(s, "’", "'")), func(r rune) bool {
		return !(r < utf8.RuneSelf && (unicode.IsLetter(r) || unicode.IsDigit(r) || r == '\''))
	})
}

func firstPerson(s string) bool {
	if strings.Contains(s, "我") || strings.Contains(s, "咱们") {
		return true
	}
	for _, w := range words(s) {
		if fpEN[w] {
			return true
		}
	}
	return false
}

// hasPhrase reports whether the word sequence ws contains phrase (words
// separated by single spaces) or, for a phrase starting with an
// apostrophe, a word ending with it.
func hasPhrase(ws []string, phrase string) bool {
	if strings.HasPrefix(phrase, "'") {
		for _, w := range ws {
			if strings.HasSuffix(w, phrase) {
				return true
			}
		}
		return false
	}
	p := strings.Fields(phrase)
	for i := 0; i+len(p) <= len(ws); i++ {
		match := true
		for j := range p {
			if ws[i+j] != p[j] {
				match = false
				break
			}
		}
		if match {
			return true
		}
	}
	return false
}

func anyPhrase(ws []string, phrases []string) bool {
	for _, p := range phrases {
		if hasPhrase(ws, p) {
			return true
		}
	}
	return false
}

func anySub(s string, subs []string) bool {
	for _, x := range subs {
		if strings.Contains(s, x) {
			return true
		}
	}
	return false
}

func flags(sent string, f *Fact) {
	ws := words(sent)
	f.Negated = anySub(sent, negZH) || anyPhrase(ws, negEN)
	for _, w := range ws {
		if strings.HasSuffix(w, "n't") {
			f.Negated = true
		}
	}
	f.Hedged = anySub(sent, hedgeZH) || anyPhrase(ws, hedgeEN) || lowercaseMay(sent)
	f.Planned = anySub(sent, planZH) || anyPhrase(ws, planEN)
}

// lowercaseMay finds the modal "may" (the month is capitalized).
func lowercaseMay(s string) bool {
	for _, w := range strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) }) {
		if w == "may" {
			return true
		}
	}
	return false
}

// --- analysis ---

// spans are code-point ranges of the sentence already claimed by an
// anchor, so that anchors do not overlap (a year is not also a number,
// the 北京 of 北京大学 not also a place).
type spans []source.Span

func (ss spans) overlaps(a, b int) bool {
	for _, s := range ss {
		if a < s.End && s.Start < b {
			return true
		}
	}
	return false
}

func analyse(sent string) Fact {
	var f Fact
	flags(sent, &f)
	rs := []rune(sent)
	var used spans
	f.Time, used = findTime(rs, used)
	f.Orgs, used = findOrgs(rs, used)
	f.Places, used = findPlaces(rs, used)
	f.Numbers, _ = findNumbers(rs, used)
	f.Role = findRole(rs)
	f.Type = classify(sent, f)
	return f
}

var (
	cueBirth     = []string{"出生", "生于", "born"}
	cueEducation = []string{"毕业", "就读", "读书", "上学", "学位", "考入", "本科", "硕士", "博士", "studied", "study", "graduated", "degree"}
	cueWork      = []string{"加入", "入职", "就职", "任职", "供职", "工作", "上班", "实习", "创办", "joined", "worked", "work at", "work for", "employed", "hired"}
	cueResidence = []string{"住在", "居住", "搬到", "搬去", "定居", "live in", "lived in", "living in", "moved to", "settled in"}
)

func cue(sent string, ws []string, cues []string) bool {
	for _, c := range cues {
		if c[0] < utf8.RuneSelf {
			if hasPhrase(ws, c) {
				return true
			}
		} else if strings.Contains(sent, c) {
			return true
		}
	}
	return false
}

func classify(sent string, f Fact) string {
	ws := words(sent)
	switch {
	case cue(sent, ws, cueBirth):
		return TypeBirth
	case cue(sent, ws, cueEducation) || strings.Contains(sent, "读了") && strings.Contains(sent, "书"):
		return TypeEducation
	case cue(sent, ws, cueWork):
		return TypeWork
	case cue(sent, ws, cueResidence):
		return TypeResidence
	case f.Role != "" && f.Time == nil && len(f.Places) == 0 && len(f.Numbers) == 0:
		return TypeIdentity
	case f.Time != nil || len(f.Places) > 0 || len(f.Orgs) > 0:
		return TypeEvent
	case len(f.Numbers) > 0:
		return TypeQuantity
	}
	return TypeIdentity
}

// --- times ---

var months = map[string]int{"january": 1, "february": 2, "march": 3, "april": 4, "may": 5, "june": 6, "july": 7,
	"august": 8, "september": 9, "october": 10, "november": 11, "december": 12, "jan": 1, "feb": 2, "mar": 3, "apr": 4,
	"jun": 6, "jul": 7, "aug": 8, "sep": 9, "sept": 9, "oct": 10, "nov": 11, "dec": 12}

var relZH = []string{"去年", "前年", "今年", "上个月", "上周", "小时候"}
var relEN = []string{"last year", "this year", "last month", "as a child"}

var zhDigit = map[rune]int{'〇': 0, '零': 0, '一': 1, '二': 2, '两': 2, '三': 3, '四': 4, '五': 5, '六': 6, '七': 7, '八': 8, '九': 9}

func isDigit(r rune) bool { return r >= '0' && r <= '9' || r >= '０' && r <= '９' }

func digitVal(r rune) int {
	if r >= '０' && r <= '９' {
		return int(r - '０')
	}
	return int(r - '0')
}

// readInt reads ASCII or full-width digits at i.
func readInt(rs []rune, i int) (v, n int) {
	for i+n < len(rs) && isDigit(rs[i+n]) && n < 12 {
		v = v*10 + digitVal(rs[i+n])
		n++
	}
	return v, n
}

// readSmall reads a Chinese numeral up to 99 (十, 十二, 二十, 三) or a
// small Arabic number at i.
func readSmall(rs []rune, i int) (v, n int) {
	if v, n = readInt(rs, i); n > 0 {
		return v, n
	}
	return readZH(rs, i)
}

// readZH reads a Chinese numeral made of 一..九, 两, 十, 百, 千, 万 at i.
func readZH(rs []rune, i int) (v, n int) {
	total, cur := 0, 0
	seen := false
	for i+n < len(rs) && n < 12 {
		r := rs[i+n]
		if d, ok := zhDigit[r]; ok && r != '〇' {
			cur = d
			seen = true
		} else if r == '十' || r == '百' || r == '千' {
			mul := map[rune]int{'十': 10, '百': 100, '千': 1000}[r]
			if !seen && r == '十' {
				cur = 1
			}
			total += max(cur, 1) * mul
			cur = 0
			seen = true
		} else {
			break
		}
		n++
	}
	return total + cur, n
}

func findTime(rs []rune, used spans) (*Time, spans) {
	// Chinese: YYYY年(M月(D日)?)?, digits Arabic, full-width or 〇一二….
	for i := 0; i < len(rs); i++ {
		year, n := readInt(rs, i)
		if n != 4 {
			year, n = 0, 0
			for n < 4 && i+n < len(rs) {
				d, ok := zhDigit[rs[i+n]]
				if !ok || rs[i+n] == '两' {
					break
				}
				year = year*10 + d
				n++
			}
			if n != 4 {
				continue
			}
		}
		if i > 0 && isDigit(rs[i-1]) {
			continue
		}
		j := i + n
		if j >= len(rs) || rs[j] != '年' || year < 1900 || year > 2099 {
			continue
		}
		j++
		t := &Time{Value: strconv.Itoa(year), Precision: PrecisionYear}
		if m, k := readSmall(rs, j); k > 0 && j+k < len(rs) && rs[j+k] == '月' && m >= 1 && m <= 12 {
			j += k + 1
			t.Value += "-" + twoDigits(m)
			t.Precision = PrecisionMonth
			if d, k := readSmall(rs, j); k > 0 && j+k < len(rs) && (rs[j+k] == '日' || rs[j+k] == '号') && d >= 1 && d <= 31 {
				j += k + 1
				t.Value += "-" + twoDigits(d)
				t.Precision = PrecisionDay
			}
		}
		return t, append(used, source.Span{Start: i, End: j})
	}
	// English: Month D, YYYY; Month YYYY; YYYY-MM-DD; a bare year.
	toks := tokens(rs)
	for k, tk := range toks {
		if m, ok := months[strings.ToLower(tk.text)]; ok && unicode.IsUpper(rs[tk.start]) {
			if k+2 < len(toks) && toks[k+1].num && toks[k+2].num && len(toks[k+2].text) == 4 {
				d, _ := strconv.Atoi(toks[k+1].text)
				y, _ := strconv.Atoi(toks[k+2].text)
				if d >= 1 && d <= 31 && y >= 1900 && y <= 2099 {
					return &Time{Value: toks[k+2].text + "-" + twoDigits(m) + "-" + twoDigits(d), Precision: PrecisionDay},
						append(used, source.Span{Start: tk.start, End: toks[k+2].end})
				}
			}
			if k+1 < len(toks) && toks[k+1].num && len(toks[k+1].text) == 4 {
				if y, _ := strconv.Atoi(toks[k+1].text); y >= 1900 && y <= 2099 {
					return &Time{Value: toks[k+1].text + "-" + twoDigits(m), Precision: PrecisionMonth},
						append(used, source.Span{Start: tk.start, End: toks[k+1].end})
				}
			}
		}
	}
	for _, tk := range toks {
		if !tk.num || len(tk.text) != 4 {
			continue
		}
		y, _ := strconv.Atoi(tk.text)
		if y < 1900 || y > 2099 {
			continue
		}
		end := tk.end
		if end < len(rs) && (rs[end] == '%' || rs[end] == '.' && end+1 < len(rs) && isDigit(rs[end+1])) {
			continue
		}
		if end+5 < len(rs) && rs[end] == '-' {
			if m, n := readInt(rs, end+1); n == 2 && rs[end+3] == '-' {
				if d, n := readInt(rs, end+4); n == 2 {
					return &Time{Value: tk.text + "-" + twoDigits(m) + "-" + twoDigits(d), Precision: PrecisionDay},
						append(used, source.Span{Start: tk.start, End: end + 6})
				}
			}
		}
		return &Time{Value: tk.text, Precision: PrecisionYear}, append(used, source.Span{Start: tk.start, End: end})
	}
	s := string(rs)
	for _, w := range relZH {
		if i := strings.Index(s, w); i >= 0 {
			a := utf8.RuneCountInString(s[:i])
			return &Time{Value: w, Precision: PrecisionRelative}, append(used, source.Span{Start: a, End: a + utf8.RuneCountInString(w)})
		}
	}
	ws := words(s)
	for _, w := range relEN {
		if hasPhrase(ws, w) {
			return &Time{Value: w, Precision: PrecisionRelative}, used
		}
	}
	return nil, used
}

func twoDigits(n int) string {
	if n < 10 {
		return "0" + strconv.Itoa(n)
	}
	return strconv.Itoa(n)
}

// token is a run of Latin letters or of digits.
type token struct {
	text       string
	start, end int
	num        bool
}

func tokens(rs []rune) []token {
	var out []token
	for i := 0; i < len(rs); {
		r := rs[i]
		switch {
		case r < utf8.RuneSelf && unicode.IsLetter(r):
			j := i
			for j < len(rs) && rs[j] < utf8.RuneSelf && (unicode.IsLetter(rs[j]) || rs[j] == '\'' || rs[j] == '-' && j+1 < len(rs) && unicode.IsLetter(rs[j+1])) {
				j++
			}
			out = append(out, token{text: string(rs[i:j]), start: i, end: j})
			i = j
		case r >= '0' && r <= '9':
			j := i
			for j < len(rs) && rs[j] >= '0' && rs[j] <= '9' {
				j++
			}
			out = append(out, token{text: string(rs[i:j]), start: i, end: j, num: true})
			i = j
		default:
			i++
		}
	}
	return out
}

// --- organisations ---

var (
	orgSuffixZH = []string{"公司", "大学", "学院", "研究院", "研究所", "银行", "集团", "中学", "小学", "医院", "实验室", "工作室",
		"报社", "出版社", "事务所", "基金会", "协会", "杂志社", "电视台", "工厂"}
	orgTriggerZH = []string{"就职于", "任职于", "供职于", "毕业于", "就读于", "加入了", "入职了", "考入了", "进入了", "加入", "入职", "考入", "进入", "在", "于", "到"}
	orgSuffixEN  = map[string]bool{"Inc": true, "Corp": true, "Corporation": true, "Ltd": true, "LLC": true, "Company": true,
		"University": true, "College": true, "Institute": true, "Lab": true, "Labs": true, "Bank": true, "Group": true,
		"Foundation": true, "School": true, "Hospital": true, "Studio": true, "Studios": true}
	workFrameZH = []string{"工作", "上班", "任职", "实习"}
)

// cjkRunBefore returns the start of the run of CJK characters ending at
// end (exclusive), at most limit long.
func cjkRunBefore(rs []rune, end, limit int) int {
	a := end
	for a > 0 && end-a < limit && source.IsCJK(rs[a-1]) {
		a--
	}
	return a
}

func findOrgs(rs []rune, used spans) ([]string, spans) {
	var out []string
	s := string(rs)
	add := func(a, b int) {
		if b-a < 2 || used.overlaps(a, b) {
			return
		}
		out = append(out, string(rs[a:b]))
		used = append(used, source.Span{Start: a, End: b})
	}
	// Chinese: a run ending in an organisation suffix, starting after the
	// nearest trigger (or where the CJK run starts, at most 10 before).
	for _, suf := range orgSuffixZH {
		for off := 0; ; {
			i := strings.Index(s[off:], suf)
			if i < 0 {
				break
			}
			i += off
			off = i + len(suf)
			end := utf8.RuneCountInString(s[:i]) + utf8.RuneCountInString(suf)
			sufStart := end - utf8.RuneCountInString(suf)
			start := cjkRunBefore(rs, sufStart, 10)
			seg := string(rs[start:sufStart])
			best := -1
			for _, tr := range orgTriggerZH {
				if k := strings.LastIndex(seg, tr); k >= 0 {
					if e := utf8.RuneCountInString(seg[:k]) + utf8.RuneCountInString(tr); e > best {
						best = e
					}
				}
			}
			if best >= 0 {
				start += best
			} else if start < sufStart && string(rs[start]) == "我" {
				start++
			}
			if k := strings.LastIndex(string(rs[start:sufStart]), "的"); k >= 0 {
				start += utf8.RuneCountInString(string(rs[start:sufStart])[:k]) + 1
			}
			if start < sufStart && !generic(rs[start:sufStart]) {
				add(start, end)
			}
		}
	}
	// Chinese frame 在X工作: X is an organisation unless it is a place.
	for _, w := range workFrameZH {
		for off := 0; ; {
			i := strings.Index(s[off:], w)
			if i < 0 {
				break
			}
			off = i + off + len(w)
			end := utf8.RuneCountInString(s[:off-len(w)])
			seg := string(rs[cjkRunBefore(rs, end, 12):end])
			k := strings.LastIndex(seg, "在")
			if k < 0 {
				continue
			}
			a := end - utf8.RuneCountInString(seg[k+len("在"):])
			if d := strings.LastIndex(string(rs[a:end]), "的"); d >= 0 {
				a += utf8.RuneCountInString(string(rs[a:end])[:d]) + 1
			}
			if a < end && !isPlace(string(rs[a:end])) && !generic(rs[a:end]) && !strings.HasSuffix(string(rs[a:end]), "了") {
				add(a, end)
			}
		}
	}
	// English: "University of X", "X Corp", capitalized names after
	// joined/at/for in a work or study sentence.
	toks := tokens(rs)
	for k := 0; k < len(toks); k++ {
		tk := toks[k]
		if tk.num || !unicode.IsUpper(rs[tk.start]) {
			continue
		}
		if (tk.text == "University" || tk.text == "Institute" || tk.text == "College") && k+2 < len(toks) && toks[k+1].text == "of" {
			e := capRun(rs, toks, k+2)
			if e > k+2 {
				add(tk.start, toks[e-1].end)
				k = e - 1
				continue
			}
		}
		if k == 0 || !capStart(rs, toks, k) {
			continue
		}
		e := capRun(rs, toks, k)
		if e > k && orgSuffixEN[toks[e-1].text] {
			add(tk.start, toks[e-1].end)
			k = e - 1
			continue
		}
		prev := strings.ToLower(toks[k-1].text)
		if (prev == "joined" || prev == "at" || prev == "for") && e > k && workOrStudy(s) && !isPlace(joinToks(toks[k:e])) {
			add(tk.start, toks[e-1].end)
			k = e - 1
		}
	}
	return out, used
}

// generic reports whether a name is a description rather than a name:
// 一家公司, 这所大学, 某个团队 (a determiner, optionally a numeral, and a
// classifier before the suffix).
func generic(rs []rune) bool {
	if len(rs) == 0 {
		return true
	}
	if strings.ContainsRune("一这那某该每", rs[0]) {
		return len(rs) <= 2 || strings.ContainsRune("家个所间座位", rs[1])
	}
	return false
}

func workOrStudy(s string) bool {
	ws := words(s)
	return cue(s, ws, cueWork) || cue(s, ws, cueEducation)
}

// capStart reports whether token k starts a capitalized name: it is
// capitalized and is not a sentence-initial word, a month or "I".
func capStart(rs []rune, toks []token, k int) bool {
	tk := toks[k]
	if tk.num || !unicode.IsUpper(rs[tk.start]) || tk.text == "I" {
		return false
	}
	if _, ok := months[strings.ToLower(tk.text)]; ok {
		return false
	}
	return true
}

// capRun returns the end (exclusive token index) of the run of
// capitalized tokens from k, separated by single spaces.
func capRun(rs []rune, toks []token, k int) int {
	e := k
	for e < len(toks) && !toks[e].num && unicode.IsUpper(rs[toks[e].start]) && toks[e].text != "I" {
		if e > k && !(toks[e].start == toks[e-1].end+1 && rs[toks[e-1].end] == ' ') {
			break
		}
		if _, ok := months[strings.ToLower(toks[e].text)]; ok {
			break
		}
		e++
	}
	return e
}

func joinToks(ts []token) string {
	parts := make([]string, len(ts))
	for i, t := range ts {
		parts[i] = t.text
	}
	return strings.Join(parts, " ")
}

// --- places ---

//go:embed data/places.txt
var placesData string

var (
	placeSet, placeList = loadPlaces()
	placeSuffixZH       = []string{"省", "市", "县", "区", "镇", "村"}
	placeTriggerZH      = []string{"住在", "搬到了", "搬到", "来自", "回到", "出生在", "出生于", "定居", "在", "到", "去了", "去", "于"}
	placePrepEN         = map[string]bool{"in": true, "to": true, "from": true, "at": true, "near": true}
)

func loadPlaces() (map[string]bool, []string) {
	set := map[string]bool{}
	var list []string
	for _, line := range strings.Split(placesData, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		set[line] = true
		list = append(list, line)
	}
	// Longest first, so 旧金山 wins over a shorter name inside it.
	sort.SliceStable(list, func(i, j int) bool { return len(list[i]) > len(list[j]) })
	return set, list
}

func isPlace(s string) bool {
	if placeSet[s] {
		return true
	}
	for _, suf := range placeSuffixZH {
		if strings.HasSuffix(s, suf) && utf8.RuneCountInString(s) > 1 {
			return true
		}
	}
	return false
}

func findPlaces(rs []rune, used spans) ([]string, spans) {
	var out []string
	s := string(rs)
	add := func(a, b int) {
		if b-a < 1 || used.overlaps(a, b) {
			return
		}
		out = append(out, string(rs[a:b]))
		used = append(used, source.Span{Start: a, End: b})
	}
	// Chinese with a suffix, after a trigger: 搬到了深圳市.
	for _, tr := range placeTriggerZH {
		for off := 0; ; {
			i := strings.Index(s[off:], tr)
			if i < 0 {
				break
			}
			off += i + len(tr)
			a := utf8.RuneCountInString(s[:off])
			for b := a + 2; b <= min(len(rs), a+7); b++ {
				if !source.IsCJK(rs[b-1]) {
					break
				}
				if isPlaceSuffix(rs[b-1]) && !(b < len(rs) && isPlaceSuffix(rs[b])) {
					add(a, b)
					// A place right after a place: 杭州市余杭区.
					a, b = b, b+1
					continue
				}
			}
		}
	}
	// Known names anywhere (outside organisations and other anchors).
	for _, name := range placeList {
		for off := 0; ; {
			i := strings.Index(s[off:], name)
			if i < 0 {
				break
			}
			a := utf8.RuneCountInString(s[:off+i])
			b := a + utf8.RuneCountInString(name)
			off += i + len(name)
			if name[0] < utf8.RuneSelf {
				// Whole words only.
				if a > 0 && unicode.IsLetter(rs[a-1]) || b < len(rs) && unicode.IsLetter(rs[b]) {
					continue
				}
			} else if b < len(rs) && isPlaceSuffix(rs[b]) {
				b++ // 杭州市
			}
			add(a, b)
		}
	}
	// English: a capitalized name after in/to/from/at/near.
	toks := tokens(rs)
	for k := 1; k < len(toks); k++ {
		if !placePrepEN[strings.ToLower(toks[k-1].text)] || !capStart(rs, toks, k) {
			continue
		}
		e := capRun(rs, toks, k)
		if e > k && !orgSuffixEN[toks[e-1].text] {
			add(toks[k].start, toks[e-1].end)
		}
	}
	// Report in sentence order.
	sortBySpan(out, rs)
	return out, used
}

func isPlaceSuffix(r rune) bool {
	for _, s := range placeSuffixZH {
		if string(r) == s {
			return true
		}
	}
	return false
}

// sortBySpan orders names by where they occur in rs.
func sortBySpan(names []string, rs []rune) {
	s := string(rs)
	sort.SliceStable(names, func(i, j int) bool { return strings.Index(s, names[i]) < strings.Index(s, names[j]) })
}

// --- numbers ---

var (
	classifiersZH = []string{"小时", "分钟", "公里", "年", "个", "次", "位", "名", "人", "家", "本", "篇", "天", "月", "周", "岁", "倍",
		"万", "亿", "元", "块", "场", "部", "首", "张", "条", "项", "门", "届", "期", "座", "所", "种", "款", "台", "趟", "遍", "支", "段", "份", "件", "米", "%", "％"}
	numberWordsEN = map[string]int{"two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
		"ten": 10, "eleven": 11, "twelve": 12, "fifteen": 15, "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "hundred": 100}
)

func classifierAt(rs []rune, i int) string {
	s := string(rs[i:min(len(rs), i+2)])
	for _, c := range classifiersZH {
		if strings.HasPrefix(s, c) {
			return c
		}
	}
	return ""
}

func findNumbers(rs []rune, used spans) ([]Number, spans) {
	var out []Number
	add := func(v, unit string, a, b int) {
		if used.overlaps(a, b) {
			return
		}
		out = append(out, Number{Value: v, Unit: unit})
		used = append(used, source.Span{Start: a, End: b})
	}
	for i := 0; i < len(rs); i++ {
		if i > 0 && (isDigit(rs[i-1]) || rs[i-1] == '.') {
			continue
		}
		var val string
		var n int
		zh := false
		if _, k := readInt(rs, i); k > 0 {
			j := i + k
			if j+1 < len(rs) && rs[j] == '.' && isDigit(rs[j+1]) {
				_, f := readInt(rs, j+1)
				j += 1 + f
			}
			val, n = normDigits(string(rs[i:j])), j-i
		} else if v, k := readZH(rs, i); k > 0 {
			if v == 1 && k == 1 {
				continue // 一 as an article: 一家, 一趟
			}
			val, n, zh = strconv.Itoa(v), k, true
		} else {
			continue
		}
		j := i + n
		for j < len(rs) && (rs[j] == '多' || rs[j] == '余' || rs[j] == ' ' && !zh) {
			j++
		}
		unit := classifierAt(rs, j)
		if unit == "" && !zh {
			// An English unit word, or none.
			if j < len(rs) && rs[j] < utf8.RuneSelf && unicode.IsLetter(rs[j]) {
				e := j
				for e < len(rs) && rs[e] < utf8.RuneSelf && unicode.IsLetter(rs[e]) {
					e++
				}
				unit = string(rs[j:e])
				j = e
			}
			add(val, unit, i, j)
			i = j - 1
			continue
		}
		if unit == "" {
			continue // a Chinese numeral without a classifier is not a quantity (一直, 十分)
		}
		if unit == "％" {
			unit = "%"
		}
		e := j + utf8.RuneCountInString(unit)
		add(val, unit, i, e)
		i = e - 1
	}
	// English number words followed by a unit: "four years".
	toks := tokens(rs)
	for k := 0; k+1 < len(toks); k++ {
		v, ok := numberWordsEN[strings.ToLower(toks[k].text)]
		if !ok || toks[k+1].num {
			continue
		}
		add(strconv.Itoa(v), toks[k+1].text, toks[k].start, toks[k+1].end)
	}
	return out, used
}

func normDigits(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r >= '０' && r <= '９' {
			r = '0' + (r - '０')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// --- roles ---

var roleStopZH = "在从被因说不这那第很也就都已还"

func findRole(rs []rune) string {
	s := string(rs)
	for _, lead := range []string{"我是", "作为"} {
		i := strings.Index(s, lead)
		if i < 0 {
			continue
		}
		rest := []rune(s[i+len(lead):])
		for _, a := range []string{"一名", "一个", "一位", "一家", "个"} {
			if strings.HasPrefix(string(rest), a) {
				rest = rest[utf8.RuneCountInString(a):]
				break
			}
		}
		e := 0
		for e < len(rest) && e < 10 && (source.IsCJK(rest[e]) || rest[e] < utf8.RuneSelf && unicode.IsLetter(rest[e])) && rest[e] != '的' {
			e++
		}
		if e >= 2 && !strings.ContainsRune(roleStopZH, rest[0]) {
			return string(rest[:e])
		}
	}
	ws := strings.Fields(strings.ToLower(s))
	for i := 0; i+2 < len(ws); i++ {
		lead := ws[i] == "as" || ws[i] == "am" && i > 0 && ws[i-1] == "i" || ws[i] == "i'm" || ws[i] == "i’m" ||
			ws[i] == "was" && i > 0 && ws[i-1] == "i"
		if !lead || ws[i+1] != "a" && ws[i+1] != "an" {
			continue
		}
		var role []string
		for _, w := range ws[i+2:] {
			clean := strings.TrimRight(w, ".,;:!?")
			if map[string]bool{"at": true, "in": true, "for": true, "with": true, "from": true, "who": true, "and": true,
				"since": true, "on": true, "of": true, "when": true}[clean] {
				break
			}
			role = append(role, clean)
			if clean != w || len(role) == 4 {
				break
			}
		}
		if len(role) > 0 {
			return strings.Join(role, " ")
		}
	}
	return ""
}
