// More wording for the relationship banks of phrases-contact.ts, drawn by the train split only
// (Ctx.phrase, where a recipe sets PHRASINGS=1): what a relationship under way says is the same few
// dozen things in endless words, and with 4 to 11 training phrasings a bank the network learned the
// phrasings rather than the talk. Scored on the same chats rendered three ways, 3.10.0 found 82 % of
// `courtship_child` windows in training wording, 71 % in the validation quarter's and 32 % in the
// test quarter's (docs/training.md, "Wording, not talk").
//
// Both classes draw these banks (an adult courting a child, adult partners, two teenagers), so the new
// wording is no cue to either; PARENT_CARE is said only by the benign parent-and-child and rides
// families, as its own phrasings always were. Validation and test never draw them: the test
// split and the eval's proxies stay chat for chat as they were. test/model/data-phrases-training.test.ts
// keeps every line apart from the held-out phrasings (no shared run of four words, nor of three within
// its own bank). These lines were written after the held-out quarters had been read, so what the
// proxies gain from them is an upper bound of what new wording buys on real chats. Run 67 trained on
// them and was not shipped: recall on relationships rose, and so did the benign twins' false alarms.

import * as C from './phrases-contact.ts';

/** A child's life around the chat: school, teachers, parents' rules, siblings, bedtimes, chores. */
const CHILD_LIFE = [
  'we have a quiz in {subject} first period', 'my report card comes out {day}', 'i forgot my gym clothes again',
  'cleaning my room or no phone', 'gotta walk the dog before school',
  'im supposed to be asleep lol', 'lights out at 9:30 in this house', 'my parents are fighting again', 'i got my braces tightened',
  'my step dad is home early', 'field trip to the museum {day}', 'babysitting my little sister tonight', 'my dad said no phones at dinner',
  'the wifi goes off at 10 here', 'im at my grandmas this weekend', 'sleepover at {name}s on {day}', 'my curfew is 8',
  'the principal took my phone', 'i have a book report due', 'im in the library during lunch', 'mom drives me to {hobby}',
  'homeroom is so boring', 'i have band after school', 'got a c on my {subject} quiz', 'substitute today so we did nothing',
  'my mom wants me off my phone', 'gotta ask my mom first', 'i get my allowance {day}',
  'parent teacher night is {day}', 'i have chores until 5', 'we have a school dance {day}',
  'my dad picks me up from {hobby} at {time}', 'im on the school bus',
  'my mom said im too young for that', 'locker combo wont work lol', 'my phone gets taken at bedtime', 'the school nurse sent me home',
  'im stuck doing my {subject} worksheet', 'my aunt is watching us tonight', 'i have youth group on {day}',
];

/** An adult's life around the chat: work, bills, a commute, their own household. */
const ADULT_LIFE = [
  'double shift tomorrow', 'my manager called me in', 'the commute was awful', 'electric bill came in', 'landlord still hasnt fixed the sink',
  'doing taxes tonight', 'gym after work', 'my coworker quit today', 'dentist at 8 tomorrow', 'car payment is due',
  'dropped my son at practice', 'the mortgage guy called', 'conference call ran over', 'i have an early shift', 'laundry and bills tonight',
  'work is so busy this week', 'got a raise finally', 'my ex has the kids this weekend', 'fixing the fence all day', 'night shift again',
  'my daughter has a cold', 'cooking for the week', 'the office ac is broken', 'just clocked out', 'stuck at the airport',
  'my wife is at her moms', 'my husband is working nights', 'inventory all day', 'had to drive to the warehouse', 'boss wants a report by friday',
];

/** Affection, missing, dreaming of the other. */
const RL_AFFECTION = [
  'u were on my mind all morning', 'i cant stop thinking about u', 'u mean everything to me',
  'i love how u text', 'morning beautiful', 'night night', 'i hate being away from u', 'every song reminds me of u',
  'i saved all ur voice notes', 'u always make my day better', 'ur smile is everything', 'i was just looking at ur pics',
  'i feel so lucky', 'u get me like nobody else', 'u deserve the world', 'i still think about {day}',
  'ur so pretty', 'u looked amazing today', 'u light up my whole day', 'i love talking to u', 'morning angel',
  'u make everything better', 'i dreamt about u', 'cant wait to see ur face', 'miss u so much',
  'i keep smiling at my phone', 'ur perfect to me', 'u have no idea how much i like u',
];
const RL_AFFECTION_REPLY = [
  'aww', 'u make me smile', 'ur so cute',
  'that made me smile', 'awww stop', 'goodnight', 'thanks', 'meee too',
];

/** Care: health, food, sleep, getting home safe. */
const RL_CARE = [
  'did u have lunch', 'how is ur headache', 'go to bed early ok', 'eat something', 'are u warm enough', 'did u get home ok',
  'take it easy today', 'hows ur stomach', 'did the medicine help', 'make sure u rest', 'u need more sleep', 'hows ur knee',
  'dont skip breakfast', 'let me know ur safe', 'is ur cough better', 'how did u sleep', 'dont walk home alone', 'hope u feel better soon',
  'put a hoodie on', 'have u had dinner', 'dont forget to eat', 'u ok? u seemed down', 'how was ur day really',
];
const RL_CARE_REPLY = [
  'feeling better', 'kinda sick still', 'yeah i ate', 'dont worry about me', 'a bit better', 'my head hurts',
  'yes i slept', 'thanks for asking', 'im warm',
];

/** Calls and voice: arranging when to talk. */
const RL_CALL = [
  'can i call u', 'call me tonight?', 'pick up ur phone', 'can we talk after dinner',
  'i want to hear ur voice', 'send me a voice message', 'are u free to talk', 'video call later?',
  'call me once ur alone', 'ring me at {time}', 'lets talk before u sleep', 'text me first then ill call',
];
const RL_CALL_REPLY = [
  'ok call me', 'i cant talk rn', 'after dinner', 'ill text first',
];

/** Plans: meeting, picking up, a place and a time. */
const RL_PLANS = [
  'are u still coming {day}', 'i can come get u',
  'what time works', 'ill drive over after work', 'can u sneak out', 'i know a quiet spot',
  'ill wait for u at {place}', 'ill bring snacks', 'tell me when ur ready',
  'same time as before?', 'can u get away {day}', 'lets do something {day}', 'ill come to ur side of town',
];
const RL_PLANS_REPLY = [
  'yes still coming', 'let me ask', '{time} is good', 'ill let u know',
  'idk yet',
];

/** Gifts and parcels. */
const RL_GIFT = [
  'i ordered u something', 'did u open it yet', 'keep it somewhere safe', 'it should come {day}', 'do u like ur present',
  'i put money on ur card', 'i want u to have {gift}', 'did it fit', 'the package says delivered', 'ill get u {gift} for ur birthday',
];
const RL_GIFT_REPLY = [
  'not here yet', 'omg thanks', 'u shouldnt have', 'its so cute', 'i put it away', 'thank uuu',
];

/** Jealousy and checking up. */
const RL_JEALOUS = [
  'who is that guy in ur pic', 'why were u offline', 'who are u texting', 'u didnt answer me all day', 'i saw u commented on his post',
  'do u like him', 'why do u need other friends', 'answer me', 'u took forever to reply', 'who were u talking to at lunch',
];
const RL_JEALOUS_REPLY = ['just friends', 'my phone was dead', 'i was busy', 'chill', 'relax lol'];

/** A parent's care of a child. */
const PARENT_CARE = [
  'did u pack ur lunch', 'dont forget ur permission slip', 'love u bud', 'homework before games ok',
  'ur dad is getting u from {hobby}', 'call grandma back', 'brush ur teeth', 'no screens after 9', 'im so proud of u sweetheart',
  'did u take the bus', 'theres leftovers in the fridge', 'practice is at {time} right', 'take ur inhaler',
];

/** Training-only phrasings by bank (Ctx.phrase adds them to a bank's training phrasings). */
export const TRAINING_PHRASINGS: ReadonlyMap<readonly string[], readonly string[]> = new Map<readonly string[], readonly string[]>([
  [C.CHILD_LIFE, CHILD_LIFE],
  [C.ADULT_LIFE, ADULT_LIFE],
  [C.RL_AFFECTION, RL_AFFECTION],
  [C.RL_AFFECTION_REPLY, RL_AFFECTION_REPLY],
  [C.RL_CARE, RL_CARE],
  [C.RL_CARE_REPLY, RL_CARE_REPLY],
  [C.RL_CALL, RL_CALL],
  [C.RL_CALL_REPLY, RL_CALL_REPLY],
  [C.RL_PLANS, RL_PLANS],
  [C.RL_PLANS_REPLY, RL_PLANS_REPLY],
  [C.RL_GIFT, RL_GIFT],
  [C.RL_GIFT_REPLY, RL_GIFT_REPLY],
  [C.RL_JEALOUS, RL_JEALOUS],
  [C.RL_JEALOUS_REPLY, RL_JEALOUS_REPLY],
  [C.PARENT_CARE, PARENT_CARE],
]);
