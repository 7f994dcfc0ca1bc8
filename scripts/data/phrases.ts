// Phrase banks for the conversation generator. Each bank lists interchangeable phrasings of one
// move in a conversation; `{slot}` markers are filled from SLOTS. Every fourth phrasing of a bank
// is held out for the test split (see generate.ts) so the test measures unseen wording.
// Explicit sexual content is deliberately absent: the sexualization stage stays at the level of
// boundary-testing questions that trust-and-safety reviewers flag.

export const SLOTS: Record<string, readonly string[]> = {
  game: ['fortnite', 'minecraft', 'roblox', 'valorant', 'apex', 'among us', 'cod', 'overwatch', 'rocket league', 'genshin'],
  app: ['snap', 'snapchat', 'telegram', 'kik', 'whatsapp', 'discord', 'signal', 'insta dms', 'wickr', 'my other account'],
  place: ['the mall', 'the park', 'the library', 'the bus stop', 'the skate park', 'mcdonalds', 'the gas station', 'the corner store', 'the train station', 'the school gate'],
  gift: ['a gift card', 'robux', 'v-bucks', 'a new phone', 'airpods', 'a new headset', 'skins', 'a nitro sub', 'some cash', 'a hoodie'],
  amount: ['$20', '$50', '$100', '200 bucks', '$500', '1000 robux', '5k vbucks', '$300', '50 dollars', '$150'],
  time: ['3', '4:30', '5pm', '6', 'noon', '7:15', 'after lunch', '8am', '3:45', 'half past 4'],
  day: ['friday', 'saturday', 'sunday', 'tomorrow', 'tonight', 'monday', 'this weekend', 'thursday'],
  hobby: ['drawing', 'dance', 'skating', 'soccer', 'singing', 'anime', 'gymnastics', 'music', 'makeup tutorials', 'coding'],
  name: ['sam', 'alex', 'jordan', 'mia', 'liam', 'emma', 'noah', 'ava', 'chris', 'taylor', 'kai', 'zoe'],
  food: ['pizza', 'tacos', 'pasta', 'burgers', 'sushi', 'mac and cheese', 'curry', 'pancakes'],
  subject: ['math', 'science', 'history', 'english', 'spanish', 'biology', 'art', 'geography'],
  e: ['😊', '😂', '❤️', '😘', '🙂', '😉', '🥺', '😅', '🔥', '💯', '👍', '😭', ':)', ';)', 'xD', '<3', 'haha', 'lol'],
};

// ---- grooming stages (predator lines) -------------------------------------------------------

export const G_CONTACT = [
  'hey saw u in the {game} lobby, ur really good',
  'hi! i love your {hobby} posts, youre so talented',
  'hey random question but are you the one who posted that {hobby} video',
  'yo nice clutch in {game} earlier, wanna squad up sometime',
  'hii sorry to message out of nowhere, you seem really cool',
  'omg your profile is so cute, how old are u btw',
  'hey i think we were in the same {game} match, you carried',
  'hello there, i noticed you like {hobby} too',
  'hey stranger {e} you seem nice, can we be friends',
  'sup, u play {game}? i need a duo partner',
  'hi, your art is amazing, do you take requests',
  'heyy i found you through a friend of a friend, hope thats ok',
  'hey, you go to {place} a lot right? i think ive seen you',
  'your last video was so good, how long have you been doing {hobby}',
  'hi :) sorry if this is random, you just seem really sweet',
  'yo you were cracked in that last {game} round',
  'hey! we have like 10 mutual friends lol',
  'hi, i help run a {hobby} club, you should join',
  'hey whats up, you from around here?',
  'u seem fun, wanna chat?',
];

export const G_TRUST = [
  'you can tell me anything, i wont judge',
  'i feel like we really get each other',
  'you are so mature for your age honestly',
  'i never had someone i could talk to like this',
  'youre not like other people, you actually listen',
  'your parents dont understand you like i do',
  'i always have time for you, whenever you need me',
  'talking to you is the best part of my day',
  'you can trust me, i would never hurt you',
  'i think about our chats all the time',
  'nobody appreciates you the way i do',
  'honestly youre my favorite person to talk to',
  'i feel like i can be myself with you',
  "you're way smarter than kids your age",
  'im always here if you need someone',
  'you deserve someone who listens to you',
  'dont worry, i get what youre going through',
  'youre special, you know that?',
  'i wish i had a friend like you when i was younger',
  'your mom sounds really strict, im sorry',
  'adults never listen to you huh? i do',
  'you can vent to me anytime, day or night',
];

export const G_RISK = [
  'are your parents around right now?',
  'does your mom check your phone?',
  'is anyone else using the computer rn',
  'do u have your own room?',
  'who else knows you talk to me',
  'when do your parents get home from work',
  'do your parents read your messages',
  'are you home alone tonight?',
  'does anyone look at your phone besides you',
  'is your door locked? just curious',
  'what time does your dad usually go to bed',
  'do your parents know your passcode',
  'is your mom still up',
  'where does your dad think you are right now',
  'can anyone see your screen',
  'do your parents go out on weekends',
  'does your sister snoop on your phone',
  'are you allowed to have your phone at night',
  'who do you live with',
  'is your bedroom door closed',
  'does your mom know your password',
  'anyone else home rn?',
];

export const G_SECRECY = [
  'this is just between us ok',
  'dont tell your parents about me, they wouldnt understand',
  'delete our chats after ok? just to be safe',
  'youre my special friend, nobody else needs to know',
  'promise you wont tell anyone about us',
  'if anyone asks, im just a friend from school',
  'our little secret right {e}',
  'people would get the wrong idea, so keep this quiet',
  'dont mention me to your friends, they might get jealous',
  'clear your history after we talk okay',
  'its nobody elses business what we talk about',
  'you have to keep this secret or we cant talk anymore',
  'dont show anyone these messages',
  'keep this between you and me',
  'your mom would freak out, so dont mention me',
  'lets not tell anyone we talk, its our thing',
  'if your dad asks, say im from your team',
  'nobody would understand what we have',
  'remember, you never got anything from me',
  'this stays private, got it?',
  'you cant tell your friends about me',
  'archive this chat so nobody sees',
];

export const G_ISOLATE = [
  'lets move to {app}, its more private',
  'add me on {app}, this site reads messages',
  'your friends are jealous, they dont get you like i do',
  'download {app} so we can talk without anyone seeing',
  'message me on {app} instead, the messages disappear',
  'your parents are too strict, you deserve some freedom',
  'you dont need those friends, you have me',
  'make a new account so your parents cant see',
  'use {app}, i made a private chat just for us',
  'i dont like you talking to other people as much as me',
  'switch to {app} its safer for us',
  'turn off your location so nobody tracks you',
  'this app isnt safe, lets talk on {app}',
  'text me on {app}, i made an account just for you',
  'your friends dont really care about you like i do',
  'use the vanish mode so it deletes',
  'lets video chat on {app} later',
  'get a second account your parents dont know about',
  'dont hang out with them, stay online with me',
  'i only trust you, not your friends',
  'go on {app} when everyone is asleep',
  'install {app} and dont tell your mom',
];

export const G_SEXUAL = [
  'have you ever kissed anyone?',
  'what are you wearing right now',
  'do u have a boyfriend? or girlfriend?',
  'you must look so cute, send a pic just for me',
  'its normal, everyone your age does this kind of stuff',
  'have you ever thought about doing grown up things',
  'do you sleep in just a tshirt',
  'bet you look so mature in a swimsuit',
  'can i see a picture of you in your room',
  'you can ask me anything about your body, i wont laugh',
  'i could teach you things your friends dont know',
  'send one without your hoodie on',
  'are you wearing pajamas already',
  'have you started dating yet',
  'do boys at school look at you',
  'you have a cute body for your age',
  'what do you look like without makeup',
  'send me a pic in your pajamas',
  'are you in bed already? send a pic',
  'have you ever been touched by anyone',
  'i bet you get asked out a lot',
  'youre growing up so fast',
  'we could talk about more grown up stuff',
  'show me your outfit, turn around',
];

export const G_COMPLY = [
  'prove you trust me',
  'turn your camera on for a sec',
  'if you really cared youd do it',
  'send me a selfie right now, i wanna see you',
  'do this one thing for me and ill know youre serious',
  'dont be a baby, just do it',
  'i did so much for you, you owe me this',
  'after everything, you cant even send one pic?',
  'go somewhere private and call me',
  'show me you are really my friend',
  'answer me right now or im done with you',
  'its just a small thing, why are you making it a big deal',
  'if you trust me you will do it',
  'come on, nobody will know',
  'just once, please, for me',
  'you said youd do anything for me',
  'if you dont, i will be really sad',
  'stop making excuses and send it',
  'youre not a little kid anymore right?',
  "i'll be upset if you say no",
  'just do it quick before your mom comes',
  'show me on camera',
];

export const G_GIFT = [
  'i can send you {gift} if you want',
  'want {amount}? i can buy it for u',
  'ill get you {gift} so we can talk more',
  'i sent you {gift}, check your account',
  'i can pay for your {game} pass, dont tell anyone',
  'what do you want for your birthday? anything',
  'i put {amount} on your account {e}',
  'i could buy you {gift} if you do something for me',
  'ill send {amount} to your card, just keep it quiet',
  'you deserve nice things, let me spoil you',
  'i can get you that skin you wanted',
  'want me to send money for a new phone',
  'i can top up your phone if you want',
  "i'll buy you the new {game} skin",
  'want me to send you some money',
  "i got you something, i'll give it to you when we meet",
  'i can pay for your data so we can talk',
  "i'll send {gift}, it's nothing",
  "tell me your gamertag, i'll gift you {amount}",
  "you want new shoes? i'll get them",
  "i'll buy you whatever you want",
  'check your account, i sent something',
];

export const G_MEET = [
  'we should meet up, i can pick you up from {place}',
  'when is your mom out, i could come over',
  'dont tell anyone were meeting ok',
  'ill wait by {place} after school {day}',
  'lets meet at {place}, just you, dont bring friends',
  'i can drive to your town {day}',
  'tell your parents youre at a friends house and meet me',
  'ill be in a grey car near {place} at {time}',
  'can you sneak out {day} night',
  'i booked a place near {place}, come alone',
  'meet me at {time} behind {place}',
  'say youre at practice and ill pick you up',
  'lets hang out, i can drive you',
  'when can i see you in person',
  'i could come by your school {day}',
  "meet me at {place}, i'll bring {gift}",
  'you could come to my place, my roommate is out',
  'say youre sleeping over at a friends and come see me',
  "i'll pick you up around the corner so nobody sees",
  'wanna meet up {day}? just us',
  'im near your area {day}',
  'i want to finally see you in real life',
];

// ---- sextortion / threats / coercion --------------------------------------------------------

export const X_HOOK = [
  'i have your pics',
  'remember the pictures you sent me? i saved all of them',
  'i recorded our video call',
  'i have screenshots of everything you said',
  'i got into your account and saw your photos',
  'you shouldnt have trusted me with those pics',
  'i know what you sent, and i kept it',
  'i still have that video of you',
  'i screenshotted your pics',
  'your video is saved on my phone',
  'i still have everything you sent',
  'i hacked your cloud and saw the pics',
];

export const X_DEMAND = [
  'send more or i send them to all your followers',
  'pay {amount} in gift cards or your parents see everything',
  'you have 24 hours to send {amount}',
  'send another one or this goes to your whole school',
  'buy {amount} of gift cards and send me the codes',
  'do what i say and nobody has to find out',
  'transfer {amount} now or i post it',
  'send a new pic tonight or i tag your mom',
  'send money now or its posted',
  'i want {amount} by tonight',
  'send another video or else',
  'pay me and i delete it',
];

export const X_THREAT = [
  'i know where you go to school',
  'i will ruin your life',
  'everyone will see what you did',
  'i already have your friends list',
  'dont test me, i will do it',
  'if you block me i post it everywhere',
  'i know your address',
  'tell anyone and it gets worse for you',
  'you will regret ignoring me',
  'your family will be so ashamed of you',
  'i will send it to your mom',
  'your school will see everything',
  "i have your family's names",
  "dont ignore me, you'll regret it",
  'everyone at school is getting it tomorrow',
];

export const C_THREAT = [
  'if you stop talking to me ill tell everyone your secrets',
  'you owe me for everything i bought you',
  'if you tell anyone ill say you lied',
  'do what i tell you or i stop being nice',
  'nobody will believe you over me',
  'you will do it because i said so',
  'if you leave me ill hurt myself and itll be your fault',
  'ill show your parents our chats and youll be in trouble',
  'you have no choice now',
  'dont make me angry, you know what happens',
  'you have to do what i say now',
  'if you say no i will tell everyone',
  'you cant back out now',
  'your parents will hate you when i show them',
  "i'll make your life hell",
];

// ---- victim replies -------------------------------------------------------------------------

export const V_FRIENDLY = [
  'lol thanks', 'omg thank u {e}', 'haha yeah', 'sure', 'ok cool', 'thanks!!', 'idk maybe',
  'yeah i guess', 'aww thats nice', 'lol ok', 'for real?', 'yea', 'hehe', 'thank youu', 'sounds fun',
  'ya',
  'ok thanks lol',
  'thats so nice',
  'no one ever says that',
  'awww',
  'lol youre funny',
  'sure why not',
];

export const V_INFO = [
  'my mom works til 6', 'no my dad is asleep', 'i have my own room yeah', 'they dont really check',
  'my parents are out tonight', 'its just me and my brother', 'i think my mom is at work', 'nobody checks my phone',
  'i share a room with my sister', 'my dad gets home late', 'im home alone till {time}', 'no one knows',
  'mom works nights',
  'no they never check',
  'my dad is away this week',
  'its just me rn',
  'they go to bed at 10',
  'my door is closed',
];

export const V_HESITANT = [
  'um why', 'thats kinda weird', 'i dont know', 'i dont think i should', 'idk that feels wrong',
  'why do u want that', 'im not allowed', 'my mom says not to', 'uh ok', 'wait what', 'i guess..',
  'im not sure about that', 'can we talk about something else', 'thats a lot lol',
  'idk if thats ok',
  'my parents would kill me',
  'why would u want that',
  'umm',
  'thats weird lol',
  'no thanks',
  'i dont feel comfortable',
];

export const V_COMPLY = [
  'ok i wont tell', 'ok i downloaded it', 'fine', 'ok', 'ok but just this once', 'i promise',
  'i deleted it', 'added u', 'okay i trust you', 'ok ill try', 'sure i guess', 'k',
  'ok i downloaded {app}',
  'ok i wont say anything',
  'ok deleted',
  'yeah ok',
  'sure',
  'done',
];

export const V_SCARED = [
  'please dont', 'im scared', 'i dont have money', 'please delete them', 'im only {age}',
  'i will tell my mom', 'please stop', 'i cant get that much', 'why are you doing this', 'leave me alone',
  'i said no', 'ill block you', 'please i didnt mean it', 'i dont know what to do',
  "please i'm begging you",
  'dont send it to anyone',
  "i'm going to tell someone",
  'stop please',
  'i cant do that',
];

// ---- small talk used as filler in every family ----------------------------------------------

export const FILLER = [
  'lol', 'haha', 'how was school', 'how was ur day', 'did u see the game last night', 'im so tired',
  'what r u doing', 'nm just chilling', 'same', 'wyd', 'bored af', 'what did u have for dinner',
  'i had {food} lol', 'thats cool', 'brb', 'back', 'ugh {subject} homework', 'do u like {food}',
  'my cat just knocked over my water', 'its raining so hard here', 'lmao', 'omg same', 'nice',
  'im watching youtube', 'have u seen that new movie', 'i love that song', 'yeah', 'true',
  'what music do u like', 'i got a new {game} skin', 'whats ur fav {subject} topic', 'hbu',
  'not much', 'cool cool', 'wait really', 'thats funny', 'i have a test {day}', 'ok', 'hmm',
  'did you finish the {subject} project', 'my brother is so annoying', 'cant wait for summer',
  'did u eat',
  'what time is it there',
  'lol my dog is barking',
  'i just woke up',
  'this song slaps',
  'my mom made {food}',
  'school tomorrow ugh',
  'lmaooo',
  'wbu',
  'same tbh',
  'thats crazy',
  'i have practice',
  'im on my phone',
  'what are u watching',
  'idk lol',
];

// ---- benign families ------------------------------------------------------------------------

export const B_PARENT = [
  'are you home yet?', 'dont forget dad picks you up at {place} at {time}', 'ill meet you at the front gate',
  'send me a pic of the homework sheet', 'keep grandmas birthday gift a secret ok', 'is your dad around? need him to call me',
  'did you eat lunch', 'text me when practice ends', 'dinner is {food} tonight', 'put your phone away and sleep',
  'are your brothers home?', 'ill transfer {amount} for the field trip', 'dont open the door for strangers ok',
  'where are you right now', 'call me when you get to {place}', 'love you, be safe {e}',
  'did you get home ok',
  'your dad will pick you up, dont walk alone',
  'send me a pic when you get there',
  'i left money on the counter',
  'dont forget your jacket',
  'who are you with?',
  'grandma sent you a gift, say thank you',
  'is your homework done',
  "i'll be home at {time}",
];
export const B_CHILD = [
  'yes im home', 'ok mom', 'can i go to {name}s house after', 'i forgot my lunch money', 'ok dad',
  'practice ends at {time}', 'can we get {food}', 'i wont tell grandma', 'im at {place}', 'love u too',
  'can i stay up till 10', 'i need {amount} for the trip', 'ok ill call', 'fineee',
  'yes i got home',
  'im with {name}',
  'thanks mom',
  'homework is done',
  'can you pick me up at {time}',
  'i said thank you to grandma',
];

export const B_TEACHER = [
  'reminder: permission slip due {day}, have your parents sign it', 'meet at {place} at {time} for the field trip',
  'please send a photo of your {subject} project', 'great job on the quiz today {e}', 'office hours are {day} at {time}',
  'your parents can email me with any questions', 'dont forget to bring a packed lunch', 'the bus leaves at {time} sharp',
  'please submit the assignment on the class portal', 'let me know if you need extra help with {subject}',
  'the results are private, only you and your parents can see them', 'remember to wear the school shirt',
  'please ask your parents to check the portal',
  'the class photo is on the website',
  'great presentation today',
  'we meet in room 12 after lunch',
  'send me your essay by email',
  'your parents are invited to the show {day}',
];
export const B_STUDENT = [
  'ok thank you', 'will my mom need to sign too', 'can i submit late', 'i dont understand question 3',
  'where do we meet exactly', 'thanks miss', 'thank you sir', 'is it graded', 'ok i uploaded it',
  'my dad will email you', 'can i bring a friend', 'what time do we get back',
];

export const B_COACH = [
  'practice moved to {time} {day}', 'bring water and cleats', 'parents can pick up at the east gate',
  'great hustle today', 'tournament is at {place}, carpool list is in the group chat', 'team photos {day}, wear the jersey',
  'ask your parents to fill in the medical form', 'we meet at {place} at {time}', 'dont forget shin guards',
  'good game everyone {e}', 'the team dinner is at {place}, families welcome', 'rest up, big game {day}',
  'warm up starts at {time}',
  'carpool: parents please reply',
  'good work at practice',
  'bring your own ball',
  'the bus leaves from {place}',
];
export const B_ATHLETE = [
  'ok coach', 'will be there', 'my mom will drive', 'i might be late, dentist', 'do we need money for the bus',
  'can my dad come too', 'thanks coach', 'got it', 'what time does it end', 'i forgot my jersey at school',
];

export const B_SECRETS = [
  'omg can u keep a secret', 'i have a crush on {name}', 'dont tell anyone ok', 'promise u wont tell',
  'my parents are getting divorced', 'i failed the {subject} test and my mom doesnt know', 'i dyed my hair and my dad is gonna freak',
  'delete that message lol its embarrassing', '{name} asked me out', 'this stays between us ok',
  'i think i want to quit the team', 'i got a secret tattoo lol', 'we should meet at {place} and talk',
  'dont tell your brother', 'i sent {name} a pic of my new haircut lol',
  'dont tell my mom i went to {place}',
  'i lost my phone and my parents dont know',
  'i secretly like {name}',
  'keep it secret but i got into the team',
  "i'm sneaking my cat into my room lol",
  'delete the pic i sent its ugly',
];
export const B_SECRETS_REPLY = [
  'omg i wont tell', 'promise', 'no wayyy', 'thats huge', 'im here for u', 'i swear i wont say anything',
  'lol ur secret is safe', 'are u ok?', 'omg what did they say', 'that sucks im sorry', 'sameee', 'tell me everything',
];

export const B_GAMING = [
  'ur trash lol', '1v1 me', 'im gonna destroy you', 'gg ez', 'ill find you and end you next round lmao',
  'who let this noob in', 'uninstall bro', 'you got lucky', 'rematch now', 'im coming for you',
  'my aim was off ok', 'stop camping', 'i will end your whole career', 'cope', 'skill issue', 'dead {e}',
  'run it back', 'you are so dead next game', 'add me on {app} for squads', 'i carried you again',
  'you cant hide from me',
  'ill hunt you down',
  'get rekt',
  'im gonna end you',
  'free kill',
  'nice try noob',
  'lag lol',
  'trash team',
];

export const B_FLIRT = [
  'you looked amazing last night', 'wanna get drinks {day}', 'cant stop thinking about you', 'send me a pic of that dress',
  'our little secret ;)', 'i had such a good time at dinner', 'miss you already', 'come over after work?',
  'your place or mine', 'cant wait to see you {day}', 'you are so cute {e}', 'lets meet at {place} at {time}',
  'dont tell my coworkers lol', 'i booked a table for {time}', 'how was the meeting babe', 'good morning handsome',
  'dinner at my place {day}?',
  'you looked so good in that photo',
  'i cant wait to kiss you',
  'send me a selfie babe',
  'i miss you, come over',
  'my roommate is out tonight',
  'i got you a gift',
  'lets keep it quiet at work for now',
];
export const B_FLIRT_REPLY = [
  'haha stop it', 'yes please', 'miss you too', 'see you at {time}', 'my place', 'you are sweet',
  'just got off work', 'omw', 'cant wait', 'hehe', 'wore it just for you', 'deal',
];

export const B_HEALTH = [
  'is it normal to get acne at {age}', 'what is consent exactly', 'my period is late, is that normal',
  'how do i know if im going through puberty', 'is it bad that i cant sleep', 'how often should i get a checkup',
  'what should i do if someone online asks for pics', 'can i talk to the nurse privately', 'why do i feel anxious all the time',
  'is it normal to have a crush on someone', 'what does the hpv vaccine do', 'how do i tell my parents i feel sad',
  'is it normal to feel tired all the time',
  'what is the safest way to lose weight',
  'how do i know if a relationship is healthy',
  'who can i talk to if someone makes me uncomfortable',
  'is it normal to get nervous before exams',
];
export const B_HEALTH_REPLY = [
  'yes thats very common at your age', 'consent means everyone agrees freely and can say no anytime',
  'stress can affect that, its worth talking to a doctor', 'everyone goes through it at their own pace',
  'try a regular bedtime and less screen time', 'once a year is a good rule', 'never send pics and tell a trusted adult',
  'of course, our chats are confidential unless youre in danger', 'talking to a counselor can really help',
  'totally normal', 'it protects against some cancers', 'maybe start by saying you want to talk, they care about you',
];

export const B_TECH = [
  'can you send a screenshot of the error', 'please move to our private support chat', 'dont share your password with anyone',
  'is your account verified', 'try restarting the router', 'what version of the app are you on',
  'i can remote in if you allow it', 'clear the cache and try again', 'did you get the verification code',
  'we never ask for your password', 'update {app} and it should work', 'is this the email on the account',
  'can you send a picture of the screen',
  'please dont share the code with anyone',
  'restart the app and log in again',
  'what device are you using',
  'we will move this to a private ticket',
  'check your spam folder',
];
export const B_TECH_REPLY = [
  'here is the screenshot', 'still not working', 'ok restarted', 'version 4.2 i think', 'yes verified',
  'got the code', 'thanks that fixed it', 'its still stuck', 'i cleared it', 'where do i find settings',
];

export const B_PARTY = [
  'ok the surprise party for mom is {day}, dont tell her', 'meet at {place} at {time}, bring the gift',
  'keep it secret from dad too, he cant keep his mouth shut', 'i got her {gift}', 'can you keep her busy till {time}',
  'dont post anything online about it', 'chip in {amount} for the cake?', 'hide the balloons in your room',
  'its just between us until saturday', 'delete this chat so she doesnt see lol',
];
export const B_PARTY_REPLY = [
  'omg yes', 'i wont say a word', 'ill take her to {place}', 'sent you the money', 'ok hidden', 'she suspects nothing',
  'lol ok deleted', 'what time should i bring her', 'shes gonna cry', 'got it',
];

export const B_MARKET = [
  'is the bike still available', 'can you send more pics of it', 'meet at {place} parking lot?', '{amount} cash ok?',
  'any scratches?', 'can you hold it till {day}', 'im around {time}', 'ill bring exact change', 'does it come with the charger',
  'my son will come pick it up', 'can you do {amount}', 'send me the address',
];
export const B_MARKET_REPLY = [
  'yes still available', 'sent more pics', 'sure that works', 'lowest i can do is {amount}', 'no scratches',
  'ill hold it', 'see you then', 'yes charger included', 'ok deal', 'white car, ill be out front',
];

export const B_ORDINARY = [
  'what are you up to this weekend', 'i finally finished that book', 'the new season is out',
  'my neighbor got a puppy', 'work was crazy today', 'we should plan a trip', 'i tried a new {food} place',
  'did you hear about the concert', 'my car needs new tires', 'i started learning guitar', 'the weather is wild',
  'how is your sister doing', 'i think im getting a cold', 'lets catch up soon', 'have you been to {place} lately',
  'i signed up for a {hobby} class', 'we got {food} for lunch', 'the game went to overtime',
  "i'm thinking of painting the kitchen",
  'did you watch the match',
  'work meeting ran late again',
  'my kid has a cold',
  'we went hiking yesterday',
  'have you tried the new bakery',
  "i'm so behind on emails",
  'the traffic was awful',
];
