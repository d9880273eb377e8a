package routing

import (
	"strings"
	"sync"

	"github.com/kljensen/snowball/english"
)

// stopWords are English function words: they say nothing about which tool
// fits, in a request or in a description. The list is the Snowball English
// list plus a few modal verbs and abbreviations.
var stopWords = setOf(`a about above after again against all am an and any are as at be
because been before being below between both but by can could did do does doing don down
during each etc few for from further had has have having he her here hers herself him
himself his how i if in into is it its itself just me more most my myself no nor not now of
off on once only or other our ours ourselves out over own s same she should so some such t
than that the their theirs them themselves then there these they this those through to too
under until up very was we were what when where which while who whom why will with would
you your yours yourself yourselves eg ie via might must shall may`)

// fillerWords phrase a request without naming its subject ("can you please
// help me, I would like to know ..."). They are dropped from queries only:
// in a description they are rare, so they would get a high IDF and pull
// in tools at random.
var fillerWords = setOf(`please want wanna need needs like tell let know help hi hello hey
thanks thank also additionally moreover furthermore kindly able possible something anything
someone somebody wondering wonder sure okay ok us im ive id interesting bored hopefully
really actually maybe perhaps basically quite anyway`)

func setOf(words string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(words) {
		m[w] = true
	}
	return m
}

func isStopWord(w string) bool { return stopWords[w] }

// synonymGroups is a small general lexicon of words that name the same
// action or thing in tool requests and tool descriptions. Each line is one
// group. It is deliberately general (software, commerce, media, travel,
// health, finance, science) and conservative: a word that commonly means
// two different things (book, post, share, log, rate, plant) is left out.
var synonymGroups = []string{
	"search find lookup seek locate discover browse",
	"get fetch retrieve obtain acquire",
	"create make generate produce build",
	"delete remove erase destroy purge",
	"update modify change edit alter amend",
	"send transmit dispatch deliver",
	"buy purchase order shop",
	"reserve reservation booking",
	"cancel abort revoke terminate",
	"calculate compute calculation computation determine",
	"estimate approximate estimation",
	"convert transform conversion",
	"translate translation translator",
	"analyze analyse analysis examine evaluate assess inspect",
	"summarize summarise summary summarization digest",
	"compare comparison contrast",
	"list enumerate",
	"show display view",
	"check verify validate validation verification",
	"monitor track tracking monitoring",
	"schedule plan scheduling planning planner",
	"predict forecast prediction projection",
	"recommend suggest recommendation suggestion advice advise tips",
	"learn study learning studying",
	"course tutorial lesson class training",
	"write compose draft writing",
	"run execute launch invoke",
	"stop halt",
	"count tally",
	"explain describe explanation description",
	"ask inquire inquiry question",
	"answer reply respond response",
	"improve optimize optimise enhance",
	"register signup enroll enrol registration enrollment",
	"login signin authenticate authentication",
	"notify alert remind reminder notification",
	"hire recruit recruiting recruitment hiring",
	"rent lease rental renting",
	"travel trip journey tour vacation holiday itinerary",
	"car vehicle auto automobile",
	"movie film cinema",
	"picture image photo photograph pic",
	"video clip footage",
	"music song songs audio tune",
	"news headline headlines",
	"job career employment vacancy occupation",
	"house home housing apartment residence property",
	"stock stocks equity equities ticker",
	"finance financial money monetary",
	"price cost fee fare pricing",
	"cheap inexpensive affordable budget discount discounted",
	"weather meteorological",
	"restaurant dining eatery diner",
	"recipe cooking cuisine dish meal",
	"doctor physician clinician",
	"medical medicine clinical healthcare",
	"disease illness sickness ailment disorder",
	"drug medication medicament pharmaceutical",
	"hotel accommodation lodging motel hostel",
	"flight airline airfare",
	"location place address venue whereabouts",
	"city town",
	"country nation",
	"company business firm corporation enterprise organization organisation",
	"employee staff worker personnel",
	"customer client",
	"email mail e-mail inbox",
	"message sms",
	"file document doc",
	"folder directory",
	"website site webpage web",
	"url link hyperlink",
	"code source program script software",
	"bug error defect fault",
	"repository repo",
	"database db",
	"password passcode passphrase credential",
	"sport sports athletic",
	"paper publication journal article",
	"academic scholarly scientific",
	"student learner pupil",
	"teacher instructor tutor",
	"store shop shopping retail retailer",
	"product item goods merchandise",
	"gift present",
	"chart graph plot diagram visualization visualisation visualize",
	"spreadsheet excel worksheet",
	"calendar agenda",
	"appointment meeting",
	"cryptocurrency crypto bitcoin ethereum",
	"currency forex",
	"nutrition diet calorie calories nutrient",
	"exercise workout fitness gym",
	"pet pets animal animals",
	"law legal lawyer attorney statute",
	"tax taxes taxation",
	"loan mortgage lending borrow",
	"bank banking",
	"invest investment investing portfolio",
	"salary wage wages pay income earnings",
	"energy electricity power",
	"distance mileage",
	"speed velocity",
	"latest recent current newest",
	"trending popular viral",
	"nearby near local",
	"random arbitrary",
	"dictionary definition define meaning",
	"poem poetry verse",
	"story tale narrative",
	"joke humor humour funny",
	"art artwork painting",
	"museum gallery exhibition",
	"event concert festival gig",
	"game gaming",
	"astronomy space cosmos",
	"quiz exam examination test",
	"resume cv",
	"podcast episode",
	"translate interpret",
	"temperature thermal",
	"statistics stats statistical",
	"image graphic",
	"chat conversation talk",
	"review rating ratings",
	"map maps navigation directions route",
	"download downloading",
	"upload uploading",
	"weekly week",
	"daily day",
	// Words of one topic that requests and tool descriptions use for each
	// other: a request names the thing, a description names the field.
	"real-estate realty property properties house houses housing homes",
	"sell sale sales selling seller",
	"buy buying buyer purchase purchasing",
	"rent renting rental tenant landlord lease",
	"market markets marketplace",
	"trade trading trader broker brokerage",
	"share shares stock stocks equity",
	"invest investing investment investor portfolio fund funds",
	"crypto cryptocurrency cryptocurrencies bitcoin ethereum blockchain token tokens coin coins",
	"currency currencies exchange forex dollar dollars euro euros yen pound",
	"price prices pricing quote quotes valuation",
	"economy economic economics inflation gdp",
	"accounting bookkeeping ledger invoice invoices billing",
	"payment payments pay paying checkout transaction transactions",
	"insurance insurer policy premium",
	"charity charities donation donations donate nonprofit fundraising",
	"news headlines article articles journalism press",
	"blog blogging blogger post",
	"social twitter facebook instagram tiktok linkedin reddit",
	"seo keyword keywords ranking backlinks",
	"advertising advert ads ad marketing campaign campaigns promotion",
	"weather forecast temperature rain snow wind humidity climate",
	"earthquake earthquakes seismic tsunami volcano disaster",
	"map maps location locations geolocation coordinates gps",
	"directions route routes navigation navigate commute",
	"flight flights airline airlines airport airfare plane",
	"hotel hotels accommodation lodging stay resort inn hostel",
	"travel traveling travelling trip trips tourism tourist tour destination destinations sightseeing",
	"restaurant restaurants dining dine eatery cafe",
	"food foods meal meals dish dishes cuisine eat eating",
	"recipe recipes cook cooking bake baking ingredient ingredients",
	"diet dietary nutrition nutritional calorie calories healthy",
	"fitness workout workouts exercise exercises gym training",
	"health healthcare medical medicine clinic hospital",
	"symptom symptoms diagnosis disease diseases illness condition",
	"doctor doctors physician therapist dentist",
	"medication medications drug drugs prescription pharmacy",
	"mental anxiety depression stress therapy wellbeing",
	"course courses class classes lesson lessons tutorial tutorials curriculum",
	"learn learning study studying education educational teach teaching",
	"school university college campus",
	"exam exams quiz quizzes test tests",
	"research paper papers scholar scholarly academic publication publications arxiv citation citations",
	"book books novel novels author authors library", // not "reading", whose stem is the verb of file tools
	"job jobs career careers employment hiring vacancy vacancies resume recruiter",
	"company companies business businesses enterprise firm corporate",
	"law laws legal lawyer lawyers attorney court lawsuit regulation regulations",
	"music song songs track tracks album albums artist artists playlist playlists",
	"podcast podcasts episode episodes",
	"movie movies film films cinema actor actors director",
	"tv television show shows series streaming",
	"video videos youtube clip clips",
	"image images picture pictures photo photos photography",
	"draw drawing illustration design designs graphic",
	"meme memes gif gifs",
	"game games gaming gamer play player",
	"sport sports team teams match matches league score scores",
	"football soccer basketball baseball tennis cricket golf hockey",
	"astrology horoscope horoscopes zodiac",
	"space nasa astronomy planet planets star stars satellite rocket",
	"pet pets dog dogs cat cats animal animals",
	"car cars vehicle vehicles automobile automotive",
	"electric ev charging charger",
	"fuel gas petrol gasoline",
	"shopping shop store stores retail ecommerce e-commerce",
	"product products item items goods",
	"deal deals discount discounts coupon coupons sale bargain cheap",
	"gift gifts present presents",
	"fashion clothes clothing apparel outfit wear",
	"beauty cosmetics makeup skincare",
	"website websites webpage webpages site sites web",
	"domain domains dns hosting",
	"url urls link links",
	"scrape scraping crawl crawler crawling extract extraction",
	"pdf pdfs document documents file files",
	"note notes notebook memo",
	"memory remember recall",
	"todo to-do task tasks reminder reminders checklist",
	"calendar schedule schedules scheduling event events appointment appointments meeting meetings",
	"email emails mail inbox",
	"message messages messaging chat sms text",
	"contact contacts phone call calls",
	"translate translation translator language languages",
	"grammar spelling proofread proofreading",
	"rewrite rewriting paraphrase rephrase polish",
	"summary summarize summarise summarization",
	"write writing writer essay essays copywriting",
	"chart charts graph graphs plot plots diagram diagrams visualize visualization",
	"data dataset datasets database databases",
	"spreadsheet spreadsheets csv excel table tables",
	"code coding program programming developer developers software",
	"repository repositories repo repos github git",
	"bug bugs issue issues error errors",
	"server servers cloud deploy deployment hosting",
	"security secure vulnerability vulnerabilities malware",
	"password passwords login credentials authentication",
	"math mathematics arithmetic equation equations formula calculator",
	"statistics statistical probability",
	"weight height bmi",
	"time clock timezone timezones",
	"date dates day days",
	"city cities town towns",
	"country countries nation nations",
	"population demographic demographics census",
	"history historical historic",
	"religion religious",
	"politics political election elections government",
	"environment environmental pollution emissions carbon",
	"energy solar wind renewable electricity power",
	"water ocean sea river lake",
	"plant plants garden gardening",
	"home house household",
	"family parent parents child children kid kids baby",
	"kid kids child children toddler",
	"wedding marriage",
	"party parties celebration",
	"ticket tickets booking reservation reserve",
}

var (
	synonymsOnce sync.Once
	synonymIndex map[string][]string // stem → the other stems of its groups
)

// synonymsOf returns the stems that share a lexicon group with stem.
func synonymsOf(stem string) []string {
	synonymsOnce.Do(buildSynonyms)
	return synonymIndex[stem]
}

func buildSynonyms() {
	synonymIndex = map[string][]string{}
	for _, g := range synonymGroups {
		stems := groupStems(g)
		for _, s := range stems {
			for _, o := range stems {
				if o != s && !contains(synonymIndex[s], o) {
					synonymIndex[s] = append(synonymIndex[s], o)
				}
			}
		}
	}
}

func groupStems(group string) []string {
	var stems []string
	for _, w := range strings.Fields(group) {
		if s := english.Stem(w, true); !contains(stems, s) {
			stems = append(stems, s)
		}
	}
	return stems
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}
