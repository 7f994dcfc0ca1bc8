// Phrase banks for two kinds of real chat the corpus lacked (issue 32), each said in both classes so
// that neither the register nor talk of ages is a cue:
//
// - first contact between strangers on anonymous chat sites: greetings, the age/sex/location ritual,
//   where each is from, handles and links, testing whether the other is nice, boredom, threats to
//   disconnect, quick flirting, and sexual talk between adults;
// - a relationship under way: affection, care, missing, jealousy, calls, plans and parcels, with each
//   side's life around it (school and parents for a child, work and rent for an adult).
//
// `{age}` is the answering side's (role B's) age and `{ageA}` role A's; other `{slot}`s come from
// phrases.ts SLOTS. As in phrases.ts, a quarter of each bank (by a hash of its text) is held out for
// the test split, and explicit sexual content is absent: adults' sexual talk stays at the level of
// suggestion that a moderator reads as adult flirting.

// ---- first contact between strangers ----------------------------------------------------------

export const ST_HELLO = [
  'hi', 'hey', 'hello stranger', 'hii', 'sup', 'yo', 'heyy :)', 'hey there', 'hi there', 'hello', 'hey stranger', 'helloo',
  'wassup', 'hey :)', 'hi :)', 'ayo', 'hey whats up', 'hiya', 'heyyy', 'howdy lol',
];

/** Asking age, sex or location: the ritual of anonymous chat, in both classes. */
export const ST_ASL = [
  'asl', 'asl?', 'm or f?', 'm/f?', 'f?', 'age?', 'u a girl?', 'where u from', 'age sex location', 'wru from', 'how old and where',
  'asl pls', 'm here, u?', 'f here, u?', 'asl plz', 'gender?', 'age n where u from', 'boy or girl', 'u m or f', 'what r u', 'm?',
  'age and gender?', 'where r u from', 'asl lol', 'how old r u', 'u a guy?',
];

/** Role B's age, sex and location ({age} is B's age). */
export const ST_ASL_B = [
  '{age} {sx} {loc}', '{age}/{sx}/{loc}', '{sx} {age} {loc}', '{age} {sx}, u?', '{sx} {age}', '{age} {sx} here', '{sx}, {age}, {loc}',
  'im {age} {sx} from {loc}', '{age} {sx} hbu', '{sx} from {loc}, {age}', '{age}. {sx}. {loc}', '{age} {sx} lol', '{sx} {age}, wbu',
  '{age} {sx} {loc} u', '{age}', 'im {age}', '{age} u?', '{sx} {age} {loc} hbu',
];

/** Role A's age, sex and location ({ageA} is A's age). */
export const ST_ASL_A = [
  '{ageA} {sx} {loc}', '{ageA}/{sx}/{loc}', '{sx} {ageA}', 'im {ageA} {sx}', '{ageA} {sx}', '{ageA} {sx}, {loc}', '{sx} {ageA} from {loc}',
  'im {ageA}, {loc}', '{ageA} here', '{ageA} {sx} lol', '{ageA}', 'im {ageA}', '{sx} {ageA} {loc}', 'same, {ageA} {sx}',
];

export const ST_WHERE = [
  'oh nice where in {loc}', 'ive always wanted to go to {loc}', 'whats the weather like there', 'is it late there?',
  'what time is it there', 'never met anyone from {loc} on here', 'cool, im not far from there lol', 'whats {loc} like',
  'u speak english there right lol', 'its like 3am here', 'wait same, {loc} too?', 'lol ur far away', 'i have a cousin in {loc}',
  'hows {loc} this time of year', 'is it cold there',
];
export const ST_WHERE_REPLY = [
  'its ok i guess', 'boring tbh', 'yeah its late lol', 'its raining as usual', 'its nice, u should visit', 'lol yes', 'its like 4pm here',
  'meh', 'pretty chill', 'cold af rn', 'hot as hell', 'nothing happens here', 'its alright', 'small town lol',
];

export const ST_BORED = [
  'im so bored', 'nothing to do lol', 'anyone normal on here', 'this site is dead tonight', 'cant sleep so here i am', 'bored af',
  'everyone here is weird', 'just killing time', 'skipped like 20 people already lol', 'why is everyone so boring here',
  'first normal person tonight', 'nothing on tv', 'insomnia lol', 'so bored i came here lol', 'ugh this site', 'just want to talk to someone',
];

/** Testing whether the other is nice, or a bot, or a creep. */
export const ST_NICE = [
  'r u nice?', 'r u a creep', 'ur not a weirdo right', 'pls dont be weird', 'r u a bot', 'prove ur not a bot lol',
  'if ur gonna be gross just skip', 'are u real', 'u seem nice so far', 'not here for anything weird ok', 'u better not be a creep lol',
  'ok u passed the vibe check', 'r u gonna be normal', 'u seem chill', 'finally someone who can spell lol',
];
export const ST_NICE_REPLY = [
  'lol im nice i promise', 'not a creep dont worry', 'im real lol', 'just here to talk', 'haha no im normal', 'beep boop jk', 'i hope so lol',
  'depends who asks lol', 'yeah just bored', 'same here', 'lol thanks', 'u too', 'i try lol',
];

/** Asking for a handle or moving to another app: between strangers of any age, harmful only in what follows. */
export const ST_HANDLE = [
  'u got snap?', 'whats ur insta', 'add me on discord', 'drop ur @', 'got kik?', 'whats ur snap', 'follow me on insta', 'u have telegram?',
  'add me on {app} its easier', 'wanna move to snap', 'this site lags, got discord?', 'give me ur @ before it disconnects',
  'we should talk somewhere else', 'do u have whatsapp', 'whats ur discord', 'got an insta?',
];
export const ST_HANDLE_REPLY = [
  'nah i dont give that out', 'maybe later lol', 'sure, its {name}{num}', 'only if ur nice', 'ok added u', 'i dont have snap', 'not yet lol',
  'its {name}_{num}', 'my insta is private', 'ok sent u a request', 'hmm idk', 'dont really use it', 'lets just talk here', 'u first',
];

export const ST_LINK = [
  'check my page lol', 'this link is so funny', 'have u seen this video', 'look at my profile', 'i post music, wanna hear',
  'can i send u a link', 'my art is on my page', 'this meme lol', 'have u seen the new trailer', 'listen to this song',
];
export const ST_LINK_REPLY = [
  'no links lol', 'i dont click links from strangers', 'haha ok', 'thats actually funny', 'later maybe', 'lol nice', 'not bad', 'nah',
];

/** Quick flirting, said between strangers of any age. */
export const ST_FLIRT = [
  'u sound cute', 'u single?', 'ur funny i like u', 'describe urself', 'what do u look like', 'u seem cute', 'bf or gf?',
  'taken or single', 'wanna be my e-gf lol', 'wanna be my e-bf lol', 'ur kinda charming', 'u have a nice vibe', 'stop flirting lol',
  'whats ur type', 'ur cute when u type like that lol', 'do u have a crush on anyone',
];
export const ST_FLIRT_REPLY = [
  'lol maybe', 'single why', 'haha stop', 'ur smooth', 'depends', 'taken sorry', 'im not telling lol', 'u first', 'aw thanks', 'lol smooth',
  'maybe ;)', 'nah just normal', 'stop lol', 'idk lol',
];

/** Threatening to leave, or leaving. */
export const ST_DISCONNECT = [
  'ok im skipping', 'bye weirdo', 'ur boring, next', 'disconnecting', 'say something interesting or im leaving', 'ew bye',
  'this is going nowhere lol bye', 'im out', 'skip', 'gonna dc', 'one more weird q and im gone', 'bye', 'nxt', 'k bye', 'cya',
];

/** Adults' sexual talk with each other, by suggestion only: benign between consenting adults. */
export const ST_ADULT_SEX = [
  'so what r u into', 'looking for fun tonight?', 'r u horny lol', 'wanna talk dirty', 'u like older guys?', 'what r u wearing',
  'im in bed rn', 'u into roleplay', 'wanna sext', 'ur making me hot', 'how experienced r u', 'tell me ur fantasy', 'r u alone rn',
  'wanna see a pic', 'u seem naughty', 'wanna have some fun', 'ive had a few drinks lol, feeling bold', 'what turns u on',
];
export const ST_ADULT_SEX_REPLY = [
  'depends ;)', 'lol maybe', 'u first', 'slow down lol', 'not tonight', 'ok sure', 'haha u wish', 'maybe if ur cute', 'mm go on',
  'youre bad lol', 'what do u want to know', 'lol bold',
];

/** An adult's life around the chat: work, rent, a car, children of their own. */
export const ST_ADULT_TALK = [
  'just got off work', 'what do u do for work', 'im a nurse, night shifts', 'long day at the office', 'having a beer lol',
  'my roommate is so loud', 'rent is crazy here', 'drove home in traffic', 'uni is stressing me out', 'i work nights',
  'finally the weekend', 'my dog is snoring next to me', 'my kids are finally asleep', 'got a job interview tmrw',
];

/** Two stated teenagers' talk: school, parents, bedtimes, being grounded. */
export const ST_PEER_TALK = [
  'what grade r u in', 'school sucks', 'u have exams too?', 'my teacher is so annoying', 'what music u like', 'u play {game}?',
  'my mom is making me clean my room', 'im grounded lol', 'lol we r the same age', 'i have {subject} tmrw', 'bedtime at 10 lol',
  'what do u do for fun', 'my parents r so strict', 'summer break cant come soon enough', 'my brother keeps bugging me',
  'wait u have school tmrw too?',
];

/** An adult who has learnt the other is a child and goes on: the first move of pursuit. */
export const ST_PURSUE = [
  'age is just a number', 'ur mature for ur age', 'thats fine i dont mind', 'u dont seem {age}', 'dont worry i wont tell',
  'so ur young, thats cute', 'i dont care about age', 'u seem older than {age}', 'thats not that young', 'i talk to lots of girls ur age',
  'wow {age}, u must be popular at school', 'older guys are better anyway', 'ur parents let u on here? lol', 'its ok, ill be nice to u',
  'i like that ur young', 'dont skip, u seem special',
];

/** The camera: asked of a child by an adult, a step of pursuit. */
export const ST_CAM = [
  'got a cam?', 'turn on ur cam', 'wanna video chat', 'can u go on cam', 'ill show u mine if u show me', 'lets facetime',
  'go somewhere private and cam', 'can i see u on cam', 'just for a sec on cam', 'ur cam works right', 'show me ur room on cam',
  'cam is more fun than typing',
];

/** A child's answers to an adult's pursuit: unsure, brushing off, going along. */
export const ST_CHILD_REPLY = [
  'idk', 'lol what', 'ur weird', 'maybe', 'im not allowed', 'my mom is home', 'i have school tmrw', 'ok', 'why', 'lol idk ur kinda old',
  'is that weird', 'um', 'ok i guess', 'what do u mean', 'i dont know', 'lol ok', 'maybe later', 'my parents would kill me',
];

/** An adult who learns the other is a child and leaves (or warns them): benign. */
export const ST_ADULT_LEAVES = [
  'oh ur {age}? nope, bye', 'ur a kid, u shouldnt be on here', 'too young for me, stay safe', 'sorry im {ageA}, this isnt right, bye',
  'go do ur homework kid lol', 'nope, skipping', 'u should get off this site honestly', 'yikes, ur a minor, bye',
  'dont talk to old guys on here ok, bye', 'im out, ur way too young', 'this site is 18+, be careful', 'u should log off, people here are weird',
];

/** A child who learns the other is an adult and leaves: benign. */
export const ST_CHILD_LEAVES = [
  'ew ur old', 'ur {ageA}?? bye', 'no thanks, bye', 'creepy, skip', 'lol no ur way older', 'my mom said not to talk to adults on here, bye',
  'nope', 'ok bye', 'thats too old lol', 'skip',
];

// ---- a relationship under way -----------------------------------------------------------------

/** Affection and missing: between partners, teen couples, and an adult courting a child. */
export const RL_AFFECTION = [
  'missed u today', 'i miss ur voice', 'did u dream about me', 'thinking about u all day', 'u make me so happy', 'cant wait to hear from u',
  'ur the best part of my day', 'goodnight beautiful', 'gm sunshine', 'love u', 'i wish u were here', 'ur so special to me',
  'i keep reading our old messages', 'nobody gets me like u do', 'u looked so cute in that pic', 'counting the days',
  'i smiled all day because of u', 'sweet dreams', 'u were in my dream again', 'hearing u laugh made my week',
];
export const RL_AFFECTION_REPLY = [
  'miss u too', 'aw', 'me too', 'yes i did lol', 'stop ur making me blush', 'love u more', 'i wish too', 'ur sweet', '❤️', 'hehe',
  'same', 'u always say that', 'gn', 'omg stop', 'really?', 'u too',
];

/** Everyday care: being unwell, eating, sleep, getting home safe. */
export const RL_CARE = [
  'feeling better today?', 'did u eat?', 'take ur medicine ok', 'drink water and rest', 'get some sleep', 'hows ur cold',
  'text me when ur home safe', 'dont stay up too late', 'is ur fever gone', 'did u sleep ok', 'hope ur tummy feels better',
  'wear something warm', 'u sounded tired earlier', 'rest up ok',
];
export const RL_CARE_REPLY = [
  'better today', 'still sick', 'yes i ate', 'ok i will', 'im fine dont worry', 'a little', 'my throat hurts', 'home now',
  'ok goodnight', 'yeah slept ok', 'still tired', 'thank u',
];

/** Arranging a call for later. */
export const RL_CALL = [
  'call u later?', 'can u talk tonight', 'facetime after 9?', 'call me when ur free', 'i need to hear ur voice', 'lets call before bed',
  'can u call when everyone is asleep', 'text me when u can talk', 'ill call at {time}', 'quick call?', 'voice note me',
  'call me on the way home',
];
export const RL_CALL_REPLY = [
  'ok after 9', 'cant tonight', 'maybe tmrw', 'yes call me', 'ill text u when i can', 'only quiet lol', 'ok', 'not now',
  'in a bit', 'yes at {time}',
];

/** Plans and meetings already agreed: is it still on, a ride, a room, the usual place. */
export const RL_PLANS = [
  'are we still on for {day}', 'is it still on', 'ill pick u up at {time}', 'i booked a room', 'meet me at {place}',
  'same place as last time?', 'i can drive to u', 'ill wait in the car', 'cant wait for {day}', 'what time can u get out',
  'ill get us food', 'the motel by the highway ok?', 'ill park around the corner', 'ill be at {place} at {time}',
  'still good for {day}?', 'i can get u from the end of ur street',
];
export const RL_PLANS_REPLY = [
  'yes still on', 'i think so', 'i have to check', 'ok {time} works', 'i cant until {day}', 'maybe', 'yes!!', 'ill tell u',
  'not sure yet', 'yes cant wait',
];

/** Parcels and gifts. */
export const RL_GIFT = [
  'did the parcel come?', 'i sent u something', 'check ur mailbox', 'i got u {gift}', 'did u like it', 'wear it for me',
  'ill send u money for the bus', 'a little something is coming {day}', 'tracking says its delivered', 'did anyone see the box',
];
export const RL_GIFT_REPLY = [
  'yes!! i love it', 'not yet', 'omg thank u', 'u didnt have to', 'it came today', 'its so pretty', 'i hid it lol', 'thank u so much',
];

/** Jealousy and checking up. */
export const RL_JEALOUS = [
  'who were u with', 'why didnt u answer', 'who is {name}', 'u were online and didnt text me', 'i dont like u talking to him',
  'are u ignoring me', 'u promised to text', 'why were u so quiet today', 'who liked ur pic',
];
export const RL_JEALOUS_REPLY = [
  'just a friend', 'my phone died', 'sorry i was busy', 'relax', 'nobody', 'im not ignoring u', 'calm down lol', 'sorry',
];

export const RL_BYE = ['gtg', 'have to go', 'talk later', 'ttyl', 'night', 'brb', 'gotta go, miss u', 'g2g', 'talk tmrw', 'bye for now'];

/** A child's life around the chat: school, a test, a parent at home, a bedtime, being grounded. */
export const CHILD_LIFE = [
  'cant talk, mom is home', 'i have a {subject} test tmrw', 'im grounded this week', 'my bedtime is 10 on school nights',
  'dad took my phone again', 'mom checks my phone sometimes', 'i have to be home by {time}', 'the bus comes at {time}', 'got detention lol',
  'my sister is in my room', 'only after school', 'im at school rn', 'my mom is picking me up', 'so much homework',
  'my teacher called my mom', 'i have practice after school', 'its a school night', 'im not allowed out on weekdays',
  'my dad gets home at {time}', 'recess was boring', 'im so bored in class',
];

/** An adult's life around the chat: work, a shift, rent, a car, a boss. */
export const ADULT_LIFE = [
  'just got off work', 'stuck in traffic', 'my boss is on my case', 'after my shift', 'paid the rent finally', 'long day at the office',
  'the kids are asleep', 'working late again', 'my car is in the shop', 'had a meeting all afternoon', 'grocery run after work',
  'the babysitter cancelled', 'payday tmrw', 'my lease is up next month', 'my back hurts from work', 'on my lunch break',
];

/** A parent's care for their child. */
export const PARENT_CARE = [
  'did u finish ur homework', 'dinner is in the fridge', 'dad will pick u up at {time}', 'love u sweetie', 'text me when ur at grandmas',
  'dont forget ur lunch', 'how was the {subject} test', 'bedtime in 20 min', 'proud of u', 'do u need money for the trip',
  'wear a jacket its cold', 'call me if u need anything', 'love u kiddo', 'is ur room clean yet', 'grandma says hi',
];

/**
 * An adult's everyday logistics with a child (a parent, a coach, an aunt): a pickup after practice, a
 * ride to school, waiting in the car. Benign, and worded as a courtship's plans are (`ill wait in the
 * car`, `ill pick u up at {time}`), so that a ride is no cue on its own (rideSlice).
 */
export const RIDE_ADULT = [
  'ill wait in the car', 'ill pick u up at {time}', 'im in the parking lot', 'running 10 min late sorry', 'what time does practice end',
  'same spot as usual?', 'ill be out front at {time}', 'text me when ur done', 'do u need a ride home', 'grandma will get u today',
  'im outside', 'ill drive u to {place} {day}', 'what time can u get out', 'dont forget ur bag in my car', 'is {name} coming with us',
  'ill drop u at school at {time}', 'wait inside til u see the car', 'pulling in now', 'traffic is bad, 15 min', 'ill be at the side door',
  '{name}s mom can take u home today', 'bring ur cleats', 'ill swing by after work', 'get in the back, the front seat is full',
];
/** A child's side of a pickup: practice, a game, the bus, a friend who needs a ride. */
export const RIDE_CHILD = [
  'practice ran late', 'can u pick me up', 'coach kept us late', 'im done at {time}', 'im outside the gym', 'where r u parked',
  'can {name} get a ride too', 'we got out early', 'the bus left without me', 'ill be at the front', 'omw out', 'i see u',
  'my phone is almost dead', 'can we get food on the way', 'im at {place}', 'game ended, we won', 'i forgot my bag in ur car',
  'be there in 5', 'practice got cancelled', 'can u come at {time} instead', 'im at the school gate', 'which car r u in',
];
export const RIDE_REPLY = [
  'ok', 'k', 'ok thanks', 'see u soon', 'omw', 'sure', 'yes', 'no problem', 'got it', 'ok ill wait', 'thx', 'ok love u', 'ok be safe',
  'cool', 'ill be there',
];

/**
 * Sexual talk between two stated teenagers, mild and non-graphic: not predatory by itself, and scored
 * by policy in the Medium Risk band (MODEL_CARD.md, "What counts as harmful"). Said by both sides.
 */
export const ST_PEER_SEXUAL = [
  'have u ever kissed anyone', 'r u a virgin lol', 'what r u wearing lol', 'wanna see a pic', 'ur so hot ngl',
  'have u done stuff with anyone', 'i think about u at night lol', 'wanna come over when my parents r out',
  'my mom would kill me if she saw this chat', 'we should make out', 'r u in bed', 'u ever sent pics', 'lol ur so dirty',
  'im blushing so hard', 'what would u do if i was there', 'ur making me think bad things lol',
];
export const ST_PEER_SEXUAL_REPLY = [
  'lol no', 'maybe', 'stop ur so bad', 'haha idk', 'u first', 'omg', 'lol yes', 'ur dirty lol', 'my mom is next door lol',
  'not telling', 'lol same', 'ur so weird', 'hehe',
];
