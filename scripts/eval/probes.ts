// Hand-written probe conversations, written for the report and never used in training: a small,
// honest look at text that did not come from the generator's phrase banks.

import type { ScoreRequest } from '../../src/scoring/types.ts';

export interface Probe extends ScoreRequest {
  name: string;
  label: 0 | 1;
  predator: 'user1' | 'user2' | 'neither';
}

export const PROBES: Probe[] = [
  {
    name: 'grooming, predator second, no ages',
    label: 1,
    predator: 'user2',
    conversation: [
      'user1: who r u',
      'user2: saw your dance vid, honestly you have talent. most girls at your school cant move like that',
      'user1: omg thx',
      'user2: how old r u anyway? you seem older',
      'user1: 13',
      'user2: age is just a number. you can always talk to me when your mom is being annoying',
      'user1: she is rn lol',
      'user2: do you have your own phone or does she look through it',
      'user1: my own',
      'user2: good. lets keep our chats private, people get jealous',
      'user2: i got a new account on a different app just for talking to you',
    ].join('\n'),
  },
  {
    name: 'grooming with gift and meeting, named speakers, ages',
    label: 1,
    predator: 'user1',
    age_a: '41',
    age_b: '12-14',
    conversation: [
      'Dave_R: hey buddy, good game today',
      'kyle2011: thanks!!',
      'Dave_R: i could get you that battle pass if you want',
      'kyle2011: for real??',
      'Dave_R: sure, you are a cool kid. dont mention it to your dad tho, he might not like me buying stuff',
      'kyle2011: ok',
      'Dave_R: you ever go to the arcade on main street? i could pick you up saturday, just us',
      'kyle2011: maybe',
    ].join('\n'),
  },
  {
    name: 'sextortion, short',
    label: 1,
    predator: 'user1',
    conversation: [
      'user1: i still have the photo you sent me last week',
      'user2: please delete it',
      'user1: 300 dollars by friday or your whole class gets it',
      'user2: i dont have that',
      'user1: then figure it out. and tell nobody',
    ].join('\n'),
  },
  {
    name: 'coercion after favours',
    label: 1,
    predator: 'user2',
    age_b: 'adult',
    age_a: 'minor',
    conversation: [
      'user1: i dont want to do the camera thing',
      'user2: after everything i did for you? i paid for your phone',
      'user1: i know but',
      'user2: if you stop now i will tell your parents what you have been saying to me',
      'user1: please dont',
      'user2: then do what i ask',
    ].join('\n'),
  },
  {
    name: 'parent arranging pickup',
    label: 0,
    predator: 'neither',
    age_a: 'adult',
    age_b: '11',
    conversation: [
      'mom: running late, meet me by the library entrance at 5:15',
      'sophie: ok. can lily come for dinner?',
      'mom: if her parents say yes. dont tell your brother about the cake, its a surprise for dad',
      'sophie: i wont!! 🎂',
    ].join('\n'),
  },
  {
    name: 'two adults planning a date',
    label: 0,
    predator: 'neither',
    conversation: [
      'user1: last night was really fun',
      'user2: it was 😊 same time next week?',
      'user1: definitely. i will book the italian place, 8pm?',
      'user2: perfect. dont tell my sister yet, she will tease me forever',
      'user1: my lips are sealed',
    ].join('\n'),
  },
  {
    name: 'teen friends sharing a secret',
    label: 0,
    predator: 'neither',
    age_a: '15',
    age_b: '15',
    conversation: [
      'user1: ok promise you wont tell anyone',
      'user2: promise',
      'user1: i think im going to ask jordan to the dance',
      'user2: OMG finally',
      'user1: shh my parents dont even know i like someone lol',
      'user2: your secret is safe. send me a pic of the outfit when you pick it',
    ].join('\n'),
  },
  {
    name: 'gaming banter',
    label: 0,
    predator: 'neither',
    conversation: [
      'xx_sniper: you are getting destroyed next round',
      'noodle: keep dreaming',
      'xx_sniper: i know where you spawn lmao',
      'noodle: camping again? pathetic',
      'xx_sniper: gg, rematch tomorrow after school?',
      'noodle: bet',
    ].join('\n'),
  },
  {
    name: 'school nurse answering a health question',
    label: 0,
    predator: 'neither',
    age_a: '14',
    age_b: 'adult',
    conversation: [
      'user1: is it weird that i havent grown as much as my friends',
      'user2: not at all, everyone develops at their own pace. if you are worried we can ask your parents to book a checkup',
      'user1: ok. can this stay private?',
      'user2: yes, unless you are in danger. you can always come by the office',
    ].join('\n'),
  },
  {
    name: 'customer support',
    label: 0,
    predator: 'neither',
    conversation: [
      'user1: my account got locked',
      'user2: sorry about that! can you send a screenshot of the message you see?',
      'user1: sent',
      'user2: thanks. never share your password with anyone, including us. i have sent a reset link to your email',
    ].join('\n'),
  },
];
