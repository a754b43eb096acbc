"""Build metaeval's bundled demo dataset (ILLUSTRATIVE DEMO DATA, not real assessments).

Run from the repository root::

    python scripts/build_demo.py            # rewrites the files in metaeval/data/demo/
    python scripts/build_demo.py --check    # exit 1 if the committed files differ from a fresh build

Everything topical here - questions, documents, nuggets, answer sentences - was written by hand by the metaeval
authors.  The facts are ordinary textbook-level statements, simplified; they are not sourced assessments.

How answers and labels are made (deterministic, seeded):

* every nugget has hand-written answer sentences: a ``full`` one that states the nugget (label ``support``), a
  ``partial`` one that states it vaguely or incompletely (``partial_support``), sometimes a ``contra`` one that
  contradicts it (``not_support``), and sometimes a ``border`` one whose label is an honest judgement call (given
  with it).  A sentence may also touch a second nugget (``also``: e.g. explaining *how* trees cool a city partly
  supports "trees cool cities");
* each run has a quality profile: for every nugget, the probability that its answer states it fully, partially or
  not at all (separately for vital and okay nuggets), plus whether it cites, cites wrongly, drifts off topic or pads
  with generic filler;
* an answer is the run's chosen sentences; the human label of every nugget is the best label any sentence of that
  answer gives it.  So the labels agree with what each answer actually says, by construction.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

SEED = 20241108
HERE = Path(__file__).resolve().parent.parent / "metaeval" / "data" / "demo"  # the shipped demo (output)
RANK = {"not_support": 0, "partial_support": 1, "support": 2}


@dataclass
class N:
    """A nugget and its hand-written answer sentences."""

    text: str
    vital: bool
    docs: tuple[int, ...]  # 1-based document numbers that state it
    full: str
    partial: str
    contra: str | None = None
    border: tuple[str, str] | None = None  # (sentence, label) - a judgement call
    also: dict[str, dict[int, str]] = field(default_factory=dict)  # variant -> {other nugget index: label}


@dataclass
class T:
    qid: str
    query: str
    intro: str
    offtopic: tuple[str, str]
    docs: list[tuple[int, str, str]]  # (grade 0-3, title, text)
    nuggets: list[N]


GENERIC = (
    "Everyone's situation is different, so it is worth reading more about it.",
    "Opinions on this question vary quite a lot.",
    "Experts do not always agree on the details.",
    "It may be best to ask a professional for advice.",
)

TOPICS: list[T] = [
    T(
        "q01", "why do cats purr and what does it mean",
        "Purring is one of the most familiar cat behaviours.",
        ("Dogs, by contrast, bark to alert their owners or when they are bored.",
         "Cats are obligate carnivores and need taurine in their diet."),
        [
            (3, "Why cats purr", "Cats purr by rapidly twitching the muscles of the larynx, which makes the vocal folds vibrate as the cat breathes in and out. The typical purr frequency lies between about 25 and 150 hertz. Most purring happens when a cat is relaxed and content, for example while being stroked."),
            (3, "Purring is not always happiness", "Purring does not always signal happiness. Cats also purr when they are injured, frightened or giving birth. Veterinarians think purring in these situations may help the cat calm itself."),
            (2, "Kittens and purring", "Kittens begin to purr when they are only a few days old. Purring lets a nursing kitten tell its mother that it is fine. This early signal may be why adult cats purr around the people who care for them."),
            (0, "Why dogs bark", "Dogs bark for many reasons, including alerting their owners, boredom and excitement. Training can reduce excessive barking. Breeds differ a lot in how much they bark."),
            (2, "Purring and healing", "Some researchers suggest that vibrations at purring frequencies could promote bone and tissue healing. The idea comes from studies of vibration therapy in humans and has not been proven in cats."),
            (2, "The solicitation purr", "Many cats use a special solicitation purr when they want food. It mixes a high-pitched cry into the normal purr, and people find it hard to ignore."),
            (1, "Do big cats purr?", "Whether big cats purr depends on the species. Cheetahs and pumas can purr, while lions and tigers roar instead."),
            (0, "Feeding your cat", "Cats are obligate carnivores and need taurine in their diet. Commercial cat food is formulated to provide it. Sudden diet changes can upset a cat's stomach."),
        ],
        [
            N("Purring is produced by twitching larynx muscles", True, (1,),
              "Cats produce the purr by rapidly twitching the muscles of the larynx, so the vocal folds vibrate as they breathe.",
              "The purring sound is made somewhere in the cat's throat."),
            N("Cats usually purr when relaxed and content", True, (1,),
              "Most of the time a cat purrs because it is relaxed and content, for example while being stroked.",
              "Purring is often linked to a cat's mood."),
            N("Cats also purr when injured, frightened or giving birth", True, (2,),
              "Cats also purr when they are injured, frightened or giving birth.",
              "A purr does not always mean that the cat is happy.",
              contra="A purring cat is always a happy cat."),
            N("Purring may help a stressed cat calm itself", True, (2,),
              "In stressful situations purring probably helps the cat soothe and calm itself.",
              "Purring may also do something for the cat itself when it is stressed."),
            N("Kittens purr to tell their mother they are fine", True, (3,),
              "Kittens start purring when a few days old, which tells their mother that they are fine while nursing.",
              "Purring starts very early in a cat's life, when kittens are still nursing."),
            N("Purr frequency is about 25 to 150 hertz", False, (1,),
              "The purr has a low frequency of roughly 25 to 150 hertz.",
              "The purr is a low-pitched, rumbling sound."),
            N("Purr vibrations may aid bone healing, but unproven", False, (5,),
              "Some researchers think purr vibrations might help bones and tissue heal, although this has not been proven in cats.",
              "Purring has sometimes been linked to healing.",
              border=("The vibrations of purring heal broken bones in cats.", "partial_support")),
            N("Cats use a solicitation purr to ask for food", False, (6,),
              "When hungry, many cats use a solicitation purr with a high-pitched cry mixed in to ask for food.",
              "Some cats purr differently when they want something from their owner."),
        ],
    ),
    T(
        "q02", "how does compound interest help retirement savings",
        "Compound interest is often called the most powerful force in saving for retirement.",
        ("Mortgage rates depend on the central bank's policy rate and on your credit score.",
         "Credit card interest rates are often above 20 percent a year."),
        [
            (3, "What is compound interest?", "Compound interest means you earn interest on your original deposit and also on the interest it has already earned. Over time this makes savings grow faster and faster, roughly exponentially. Simple interest only pays on the original amount."),
            (3, "Why starting early matters", "Because growth compounds, money invested early has more years to grow. Someone who starts saving at 25 can end up with far more at retirement than someone who saves the same monthly amount from 35. Time in the market matters more than the exact amount."),
            (0, "How mortgage rates are set", "Mortgage rates depend on the central bank's policy rate and on the borrower's credit score. A fixed-rate mortgage keeps the same payment for the whole term."),
            (2, "The rule of 72", "The rule of 72 gives a quick estimate of doubling time. Divide 72 by the annual return: at 6 percent, money doubles in about 12 years, and at 9 percent in about 8 years."),
            (2, "Fees and inflation", "High fees compound too, and they can eat a large part of long-term returns. Inflation reduces what savings will buy, so real returns are lower than nominal ones. Low-cost index funds keep more of the compounding for you."),
            (2, "Reinvesting and tax-deferred accounts", "Reinvesting dividends and interest, rather than spending them, is what allows compounding to work. Retirement accounts such as 401(k)s and IRAs let investments grow tax-deferred, which adds to the effect. Early withdrawals interrupt the growth."),
            (1, "Saving every month", "Saving a fixed amount every month keeps contributions steady through market ups and downs. Automatic payroll deductions make this easier."),
            (0, "Credit card interest", "Credit card interest rates are often above 20 percent a year. Paying the full balance each month avoids interest charges entirely."),
        ],
        [
            N("Compound interest earns interest on previous interest", True, (1,),
              "With compound interest you earn returns not only on your deposits but also on the interest they have already earned.",
              "Compound interest makes the money you save grow over time."),
            N("Starting to save early greatly increases final savings", True, (2,),
              "Starting early matters most: someone who begins saving at 25 can retire with far more than someone who starts the same plan at 35.",
              "It is generally better not to wait too long before starting to save."),
            N("Growth accelerates over time, roughly exponentially", True, (1,),
              "The growth speeds up the longer the money stays invested, becoming roughly exponential.",
              "Savings tend to grow more in the later years."),
            N("Reinvesting dividends and interest keeps compounding going", True, (6,),
              "Reinvesting dividends and interest instead of spending them is what keeps compounding working.",
              "What you do with your earnings affects how your savings grow.",
              contra="Taking the interest out each year makes no difference to long-term growth."),
            N("Rule of 72 estimates doubling time", False, (4,),
              "The rule of 72 estimates the doubling time: at a 6 percent return money doubles in about 12 years.",
              "There are simple rules of thumb for how fast money doubles."),
            N("Fees and inflation reduce compounded returns", False, (5,),
              "High fees and inflation eat into compounded returns, so low-cost funds keep more of the growth.",
              "Costs such as fees can affect what you end up with."),
            N("Tax-deferred accounts like 401(k)s boost compounding", False, (6,),
              "Tax-deferred accounts such as a 401(k) or an IRA let investments compound without yearly taxes.",
              "Retirement accounts come with some tax advantages.",
              border=("Putting money in a 401(k) helps it grow faster.", "partial_support")),
        ],
    ),
    T(
        "q03", "what are the benefits and risks of intermittent fasting",
        "Intermittent fasting has become a popular way of eating.",
        ("The ketogenic diet is very low in carbohydrates and high in fat.",
         "Adults need roughly two to three litres of fluids a day."),
        [
            (3, "Intermittent fasting basics", "Intermittent fasting alternates periods of eating with periods of fasting. Common schedules include the 16:8 method, with an eight-hour eating window each day, and the 5:2 diet, with two low-calorie days a week."),
            (3, "Does it help weight loss?", "Many people lose weight on intermittent fasting, mainly because they eat fewer calories overall. Trials comparing it with ordinary daily calorie restriction find similar weight loss."),
            (3, "Metabolic effects", "Some studies report improved insulin sensitivity and lower blood sugar during intermittent fasting. Fasting lowers insulin levels, which helps the body use stored fat. Long-term effects are still being studied."),
            (0, "What is the keto diet?", "The ketogenic diet is very low in carbohydrates and high in fat. It pushes the body into ketosis, where it burns fat for fuel."),
            (2, "Side effects", "Common side effects at the start include hunger, headaches, irritability and fatigue. These often ease after a few weeks."),
            (2, "Who should avoid it", "Intermittent fasting is not recommended for pregnant or breastfeeding women, for people with a history of eating disorders, or for children. People with diabetes who take insulin or other glucose-lowering drugs risk dangerously low blood sugar and should talk to a doctor first."),
            (1, "Keeping muscle", "Losing weight quickly can also cost muscle. Eating enough protein and doing strength training helps preserve muscle mass."),
            (0, "How much water to drink", "Adults need roughly two to three litres of fluids a day, depending on activity and climate. Water, tea and food all count."),
        ],
        [
            N("Intermittent fasting alternates eating and fasting periods", True, (1,),
              "Intermittent fasting means alternating set periods of eating with periods of fasting.",
              "Intermittent fasting is about changing when you eat."),
            N("Common schedules are 16:8 and 5:2", True, (1,),
              "Popular schedules are the 16:8 method, with an eight-hour daily eating window, and the 5:2 diet.",
              "There are several fasting schedules, some with a daily eating window."),
            N("It can lead to weight loss through fewer calories", True, (2,),
              "It often leads to weight loss, mostly because people end up eating fewer calories.",
              "Some people find it helps them lose weight."),
            N("It may improve insulin sensitivity and blood sugar", True, (3,),
              "Some studies show better insulin sensitivity and lower blood sugar levels.",
              "It may have some benefits for metabolism."),
            N("Unsuitable during pregnancy, eating disorders, or for children", True, (6,),
              "It is not recommended for pregnant or breastfeeding women, people with a history of eating disorders, or children.",
              "It is not suitable for everyone, and some groups should avoid it.",
              border=("Pregnant women should avoid intermittent fasting.", "partial_support")),
            N("Weight loss is similar to ordinary calorie restriction", False, (2,),
              "In trials, weight loss was about the same as with ordinary daily calorie restriction.",
              "It does not seem to beat other diets by much.",
              contra="It burns far more fat than any other diet."),
            N("Early side effects include hunger, headaches and fatigue", False, (5,),
              "At first people often feel hunger, headaches, irritability and tiredness, which usually ease after a few weeks.",
              "The first weeks can be uncomfortable."),
            N("People on glucose-lowering drugs risk low blood sugar", False, (6,),
              "People with diabetes on insulin or similar drugs risk dangerously low blood sugar and should ask a doctor first.",
              "People with diabetes should be careful with fasting."),
            N("Eating protein and strength training preserve muscle", False, (7,),
              "Eating enough protein and doing strength training helps keep muscle while losing weight.",
              "Exercise is a good idea alongside any diet."),
        ],
    ),
    T(
        "q04", "how to keep houseplants alive in winter",
        "Winter is a hard season for most houseplants.",
        ("Before the first frost, mulch outdoor beds and bring in the garden hoses.",
         "A cut Christmas tree should always stand in water."),
        [
            (3, "Watering in winter", "Most houseplants grow slowly in winter and need much less water. Let the top few centimetres of soil dry out before watering again. Overwatering in winter is a leading cause of root rot."),
            (3, "Light in the dark months", "Days are shorter and the sun is lower in winter, so move plants closer to a bright window, ideally one facing south. Grow lights can make up for the missing daylight."),
            (0, "Getting the garden ready for winter", "Before the first frost, mulch outdoor beds and bring in hoses. Tender bulbs such as dahlias can be dug up and stored indoors."),
            (3, "Drafts and radiators", "Keep houseplants away from cold drafts from doors and windows and away from hot radiators. Most tropical houseplants prefer about 15 to 24 degrees Celsius. Leaves touching cold glass can be damaged."),
            (2, "Humidity", "Indoor heating dries the air, and many tropical plants suffer in low humidity. Grouping plants together, using a pebble tray with water, or running a humidifier raises humidity. Brown leaf tips are a common sign of dry air."),
            (2, "Fertilizer", "Stop or greatly reduce fertilizing in winter, because plants are barely growing. Extra fertilizer builds up as salts in the soil and can burn roots."),
            (1, "Winter pests", "Spider mites thrive in warm, dry indoor air in winter. Check the undersides of leaves regularly and wipe leaves to remove dust."),
            (0, "Christmas tree care", "A cut Christmas tree should be kept in water at all times. Make a fresh cut at the base before putting it in the stand."),
        ],
        [
            N("Water less in winter; let soil dry first", True, (1,),
              "Water much less often in winter and let the top of the soil dry out before watering again.",
              "Adjust how often you water your plants in winter.",
              contra="Plants need more water in winter because the air is dry."),
            N("Overwatering in winter causes root rot", True, (1,),
              "Overwatering in winter is a common cause of root rot.",
              "Too much water can harm plants in winter."),
            N("Move plants closer to a bright window", True, (2,),
              "Move plants closer to a bright, preferably south-facing window to make up for the short days.",
              "Make sure your plants still get enough light."),
            N("Keep plants away from cold drafts and radiators", True, (4,),
              "Keep them away from cold drafts near doors and windows as well as from hot radiators.",
              "Pay attention to where the plants stand in the room."),
            N("Raise humidity by grouping plants or using humidifiers", True, (5,),
              "Because heating dries the air, raise humidity by grouping plants, using a pebble tray or running a humidifier.",
              "Dry indoor air can be a problem for some plants.",
              border=("A humidifier can help plants that like moist air.", "support")),
            N("Stop or reduce fertilizing during winter", False, (6,),
              "Stop fertilizing, or feed very little, until new growth appears in spring.",
              "Plants need less feeding at some times of the year."),
            N("Grow lights can replace missing daylight", False, (2,),
              "A grow light can make up for the missing winter daylight.",
              "Extra lighting equipment is sold for indoor plants."),
            N("Check leaves for spider mites in dry air", False, (7,),
              "Check the undersides of leaves for spider mites, which thrive in warm, dry indoor air.",
              "Keep an eye out for pests."),
        ],
    ),
    T(
        "q05", "why is sleep important for teenagers",
        "Sleep is especially important during the teenage years.",
        ("Toddlers usually need one nap a day until about age three.",
         "A good mattress should keep the spine in a neutral position."),
        [
            (3, "How much sleep teens need", "Teenagers need about 8 to 10 hours of sleep a night, according to sleep medicine experts. Most get far less, especially on school nights."),
            (3, "The teenage body clock", "During puberty the body clock shifts later, so teenagers naturally feel sleepy later at night. The sleep hormone melatonin is released later than in children or adults. Early school start times clash with this."),
            (3, "Sleep and learning", "Sleep helps the brain consolidate memories and learning from the day. Sleep-deprived students have more trouble concentrating and tend to get lower grades."),
            (2, "Sleep and mood", "Lack of sleep is linked to irritability, depression and anxiety in adolescents. Poor sleep and low mood can reinforce each other."),
            (0, "Toddler naps", "Toddlers usually need one nap a day until about age three. A consistent nap time helps them sleep better at night."),
            (2, "Drowsy driving", "Drowsy driving is a serious risk for young drivers. Sleepy teens react more slowly and are more likely to crash."),
            (1, "Screens at bedtime", "Phones and tablets emit blue light and keep the mind alert, which can delay sleep. Experts advise turning off screens an hour before bed."),
            (0, "Choosing a mattress", "A good mattress should support the spine in a neutral position. Many stores offer trial periods of several months."),
        ],
        [
            N("Teenagers need about 8 to 10 hours", True, (1,),
              "Teenagers need about 8 to 10 hours of sleep each night, but most get much less.",
              "Teens need quite a lot of sleep, more than many of them get.",
              contra="Teenagers need less sleep than adults, around six hours."),
            N("Sleep supports memory consolidation and learning", True, (3,),
              "While they sleep, the brain consolidates memories and what was learned during the day.",
              "Sleep is good for the brain."),
            N("Sleep loss harms concentration and grades", True, (3,),
              "Students who are short on sleep concentrate worse and tend to get lower grades.",
              "Tired students may struggle at school."),
            N("Poor sleep is linked to depression and anxiety", True, (4,),
              "Lack of sleep is linked to irritability, depression and anxiety in teenagers.",
              "Sleep affects how teenagers feel."),
            N("Puberty shifts the body clock later", False, (2,),
              "In puberty the body clock shifts later, with melatonin released later at night, so teens naturally fall asleep later.",
              "Teenagers often prefer to stay up late.",
              border=("Teens tend to be night owls because of their hormones.", "partial_support")),
            N("Drowsy teen drivers are more likely to crash", False, (6,),
              "Sleepy teenage drivers react more slowly and are more likely to crash.",
              "Being tired makes everyday things such as driving riskier."),
        ],
    ),
    T(
        "q06", "how do electric cars affect the environment",
        "Electric cars are often promoted as a greener way to drive.",
        ("Hybrid cars combine a petrol engine with a small battery.",
         "Cycling to work is cheap and good exercise."),
        [
            (3, "No exhaust", "Electric cars have no tailpipe emissions, so they release no exhaust gases such as nitrogen oxides in city streets. This improves local air quality, especially in dense urban areas. Brake and tyre wear still produce some particles."),
            (3, "Lifecycle emissions", "Over its whole life, a typical electric car produces lower greenhouse gas emissions than a comparable petrol car. Manufacturing the battery causes higher emissions at the start, but this carbon debt is usually paid back after one to two years of driving."),
            (3, "The grid matters", "How clean an electric car is depends on how the electricity is generated. Charging from a coal-heavy grid reduces the climate benefit, while renewable power increases it. As grids add more wind and solar, electric cars get cleaner over time."),
            (0, "Buying a hybrid", "Hybrid cars combine a petrol engine with a small battery. They are a popular choice for drivers who cover long distances."),
            (2, "Battery minerals", "Batteries need lithium, cobalt and nickel. Mining these minerals can damage ecosystems and use a lot of water."),
            (2, "Battery recycling", "Used electric car batteries can be recycled to recover valuable metals, and many get a second life storing energy for buildings. Recycling capacity is still growing."),
            (1, "Efficiency", "Electric motors turn about 80 to 90 percent of battery energy into motion, while combustion engines use only about 20 to 30 percent of the fuel's energy. Regenerative braking recovers some energy when the car slows down."),
            (0, "Cycling to work", "Cycling to work is cheap and good exercise. Many cities are building protected bike lanes."),
        ],
        [
            N("Electric cars have no tailpipe emissions", True, (1,),
              "Electric cars produce no tailpipe emissions, so they release no exhaust on the street.",
              "Electric cars are often described as cleaner to drive.",
              border=("Electric cars are zero-emission vehicles.", "partial_support")),
            N("Lifecycle greenhouse emissions are lower than petrol cars", True, (2,),
              "Over their whole life they usually cause lower greenhouse gas emissions than comparable petrol cars.",
              "They are generally considered better for the climate.",
              contra="Over their lifetime electric cars emit more carbon than petrol cars."),
            N("Battery manufacturing causes higher initial emissions", True, (2,),
              "Building the battery causes higher emissions at the start, a carbon debt usually repaid within one to two years of driving.",
              "Making electric cars also has an environmental cost.",
              also={"full": {1: "partial_support"}}),
            N("Benefit depends on how electricity is generated", True, (3,),
              "How clean they are depends on the electricity: charging from coal power shrinks the benefit, while renewables increase it.",
              "Where the electricity comes from matters too."),
            N("Mining lithium, cobalt and nickel harms ecosystems", True, (5,),
              "Mining the lithium, cobalt and nickel for batteries can damage ecosystems and use a lot of water.",
              "Batteries need raw materials that have to be mined."),
            N("They improve local air quality in cities", False, (1,),
              "Electric cars help improve local air quality in busy cities.",
              "City air could benefit as well."),
            N("Batteries can be recycled or reused for storage", False, (6,),
              "Old batteries can be recycled to recover metals or reused to store energy for buildings.",
              "Old batteries do not necessarily end up as waste."),
            N("Electric motors are far more energy efficient", False, (7,),
              "Electric motors turn about 80 to 90 percent of battery energy into motion, compared with 20 to 30 percent for combustion engines.",
              "Electric drivetrains are quite efficient."),
            N("Cleaner grids make electric cars cleaner over time", False, (3,),
              "As grids add more wind and solar power, electric cars get cleaner over time.",
              "Electric cars may become greener in the future.",
              also={"full": {3: "partial_support"}}),
        ],
    ),
    T(
        "q07", "what causes sourdough bread to rise",
        "Sourdough bread rises without any packaged yeast.",
        ("Baking soda is a chemical leavening agent used in cakes.",
         "People with coeliac disease must avoid gluten completely."),
        [
            (3, "What is a sourdough starter?", "A sourdough starter is a mix of flour and water colonised by wild yeasts and lactic acid bacteria. The wild yeasts ferment sugars in the flour and release carbon dioxide gas. The gas is what makes the dough rise."),
            (3, "Gluten", "When flour is mixed with water and kneaded, proteins form gluten, a stretchy network. Gluten traps the carbon dioxide bubbles so the dough expands instead of letting the gas escape."),
            (3, "Why sourdough tastes sour", "Lactic acid bacteria in the starter produce lactic and acetic acids. These acids give sourdough its tangy flavour and help it keep longer."),
            (0, "Baking soda", "Baking soda is a chemical leavening agent used in quick breads and cakes. It reacts with acids to release gas immediately."),
            (2, "A slow rise", "Sourdough rises more slowly than bread made with commercial yeast, often taking 4 to 12 hours. Warmth speeds fermentation, while a cold proof in the fridge slows it down."),
            (2, "Oven spring", "In the hot oven the gas bubbles expand and the yeast works briefly before dying, giving a final burst of rise called oven spring. The crust then sets."),
            (1, "Feeding a starter", "A starter must be fed with fresh flour and water regularly to stay active. An active starter roughly doubles in size a few hours after feeding."),
            (0, "Gluten-free eating", "People with coeliac disease must avoid gluten completely. Rice, corn and buckwheat are naturally gluten-free."),
        ],
        [
            N("Wild yeasts in the starter ferment flour sugars", True, (1,),
              "The starter contains wild yeasts that ferment the sugars in the flour.",
              "Sourdough relies on a starter instead of store-bought yeast."),
            N("Fermentation releases carbon dioxide that raises dough", True, (1,),
              "Fermentation releases carbon dioxide gas, which makes the dough rise.",
              "A gas forms inside the dough.",
              contra="The dough rises because the bacteria turn the water into steam."),
            N("Gluten network traps the gas bubbles", True, (2,),
              "Kneading develops gluten, a stretchy network that traps the gas bubbles so the dough expands.",
              "The proteins in the flour give the bread its structure."),
            N("Lactic acid bacteria give the sour flavour", True, (3,),
              "Lactic acid bacteria in the starter make acids that give sourdough its tangy taste.",
              "The starter also shapes the bread's flavour."),
            N("Sourdough rises slowly, often 4 to 12 hours", False, (5,),
              "Sourdough rises slowly, often taking 4 to 12 hours, faster when warm and slower in the fridge.",
              "The rise takes quite a while."),
            N("Oven spring gives a final rise while baking", False, (6,),
              "In the hot oven the gas expands and gives a final burst of rise called oven spring.",
              "The oven heat affects how much the loaf rises.",
              border=("The loaf keeps rising for a short time in the oven.", "support")),
            N("A starter must be fed regularly to stay active", False, (7,),
              "The starter has to be fed fresh flour and water regularly to stay active.",
              "A starter needs some looking after."),
        ],
    ),
    T(
        "q08", "how can cities reduce urban heat islands",
        "Urban heat islands are a growing concern as cities expand.",
        ("Cities plan snow removal routes before winter starts.",
         "Many cities offer discounted public transport fares for students."),
        [
            (3, "What is an urban heat island?", "An urban heat island is a city area that is noticeably warmer than the surrounding countryside. Asphalt, concrete and buildings absorb sunlight during the day and release the heat at night."),
            (3, "Trees and parks", "Planting trees and creating parks is one of the most effective ways to cool a city. Trees shade streets and buildings and cool the air by releasing water vapour from their leaves."),
            (3, "Cool roofs", "Cool roofs use reflective paint or light-coloured materials that reflect more sunlight and absorb less heat. They keep buildings cooler and lower the demand for air conditioning."),
            (2, "Green roofs", "Green roofs are covered with plants that shade the roof and cool the air through evaporation. They also absorb rainwater."),
            (0, "Planning snow removal", "Cities plan snow removal routes before winter starts. Salt lowers the freezing point of water on roads."),
            (2, "Heat and health", "Heat islands make heat waves more dangerous, raising the risk of heat stroke, especially for older people. Higher temperatures also increase energy use for cooling."),
            (1, "Water and wind", "Fountains, ponds and open water can cool nearby air. Street layouts that let wind pass through also help remove heat."),
            (0, "Public transport fares", "Many cities offer discounted public transport fares for students and older residents. Monthly passes are often cheaper for daily commuters."),
        ],
        [
            N("Cities are warmer than surrounding rural areas", True, (1,),
              "An urban heat island is a city area that is noticeably warmer than the countryside around it.",
              "Cities tend to be warmer than other places."),
            N("Asphalt and concrete absorb and release heat", True, (1,),
              "Asphalt, concrete and buildings soak up sunlight by day and release the heat at night.",
              "Built-up surfaces play a part in the heat."),
            N("Planting trees and parks cools cities", True, (2,),
              "Planting trees and creating parks is one of the most effective ways to cool a city.",
              "More greenery is often suggested.",
              contra="Trees have little effect on city temperatures."),
            N("Trees cool via shade and evaporating water", True, (2,),
              "Trees cool by shading streets and by releasing water vapour from their leaves.",
              "Trees help in more than one way.",
              also={"full": {2: "partial_support"}}),
            N("Cool reflective roofs reduce heat absorption", True, (3,),
              "Cool roofs with reflective or light-coloured surfaces absorb less heat and keep buildings cooler.",
              "Roof materials can make a difference.",
              border=("Painting roofs white helps.", "partial_support")),
            N("Green roofs cool through plants and evaporation", False, (4,),
              "Green roofs covered with plants cool the air through shade and evaporation.",
              "Some buildings have plants on their roofs."),
            N("Heat islands raise heat-wave health risks", False, (6,),
              "Heat islands make heat waves more dangerous, raising the risk of heat stroke, especially for older people.",
              "Extra heat can be bad for health."),
            N("Cooler cities need less air conditioning energy", False, (3, 6),
              "Cooler buildings and streets mean less energy is needed for air conditioning.",
              "Energy use is also affected."),
        ],
    ),
]


# ------------------------------------------------------------------------------------------------------- runs
@dataclass(frozen=True)
class Profile:
    """How a synthetic run answers: P(full), P(partial), P(omit) for vital and for okay nuggets, and its habits."""

    run_id: str
    blurb: str
    vital: tuple[float, float, float]
    okay: tuple[float, float, float]
    cites: str  # "right" (the documents that state the fact), "none", or "mixed" (half the time an off-topic one)
    intro: bool
    filler: int  # generic sentences added
    offtopic: int  # off-topic sentences added
    contra: float  # P(contradict an omitted nugget that has a contradicting sentence)
    border: float  # P(use the judgement-call sentence when it has the label drawn)
    vital_first: bool


RUNS: tuple[Profile, ...] = (
    Profile("demo-a", "excellent: states nearly all vital facts fully, cites its sources",
            (0.90, 0.07, 0.03), (0.60, 0.15, 0.25), "right", True, 0, 0, 0.0, 0.2, True),
    Profile("demo-b", "good: most vital facts, some only vaguely; cites",
            (0.70, 0.15, 0.15), (0.40, 0.20, 0.40), "right", True, 0, 0, 0.0, 0.3, True),
    Profile("demo-c", "good but terse: vital facts, few details",
            (0.65, 0.10, 0.25), (0.10, 0.05, 0.85), "right", False, 0, 0, 0.0, 0.3, True),
    Profile("demo-d", "medium: about half the facts, a mix of precise and vague",
            (0.45, 0.25, 0.30), (0.30, 0.20, 0.50), "right", True, 1, 0, 0.1, 0.3, False),
    Profile("demo-e", "vague: touches many facts but rarely states them precisely",
            (0.12, 0.63, 0.25), (0.05, 0.45, 0.50), "right", True, 1, 0, 0.0, 0.5, False),
    Profile("demo-f", "medium, no citations, padded with generic filler",
            (0.50, 0.20, 0.30), (0.30, 0.20, 0.50), "none", True, 2, 0, 0.1, 0.3, False),
    Profile("demo-g", "weak: few facts, some contradicted, citations often wrong",
            (0.20, 0.20, 0.60), (0.10, 0.15, 0.75), "mixed", True, 1, 1, 0.6, 0.3, False),
    Profile("demo-h", "poor: mostly off-topic or generic, almost no facts",
            (0.03, 0.07, 0.90), (0.00, 0.05, 0.95), "mixed", True, 2, 2, 0.2, 0.0, False),
)


def docid(qid: str, k: int) -> str:
    return f"demo_doc_{qid}_{k}"


def build_answer(topic: T, prof: Profile) -> tuple[dict, list[str]]:
    """One run's answer to one topic (TREC RAG 2024 format) and the human label of each nugget."""
    rng = random.Random(f"{SEED}:{prof.run_id}:{topic.qid}")
    zero_docs = [k for k, (g, _, _) in enumerate(topic.docs, start=1) if g == 0]
    parts: list[tuple[str, list[int], dict[int, str]]] = []  # (sentence, cited doc numbers, nugget -> label)
    for i, n in enumerate(topic.nuggets):
        p_full, p_part, _ = prof.vital if n.vital else prof.okay
        u = rng.random()
        outcome = "full" if u < p_full else ("partial" if u < p_full + p_part else "omit")
        if outcome == "omit":
            if n.contra and rng.random() < prof.contra:
                parts.append((n.contra, [], {i: "not_support"}))
            continue
        label = "support" if outcome == "full" else "partial_support"
        text, effects = (n.full if outcome == "full" else n.partial), {i: label}
        if n.border and n.border[1] == label and rng.random() < prof.border:
            text = n.border[0]
        else:
            effects.update(n.also.get(outcome, {}))
        parts.append((text, list(n.docs), effects))
    if not prof.vital_first:
        rng.shuffle(parts)
    for k in rng.sample(range(len(topic.offtopic)), prof.offtopic):
        parts.insert(rng.randrange(len(parts) + 1), (topic.offtopic[k], [zero_docs[k]], {}))
    for s in rng.sample(GENERIC, prof.filler):
        parts.insert(rng.randrange(len(parts) + 1), (s, [], {}))
    if prof.intro or not parts:
        parts.insert(0, (topic.intro, [], {}))

    cited: list[list[int]] = []
    for text, docs, effects in parts:
        if prof.cites == "none" or not docs:
            cited.append([])
        elif prof.cites == "mixed" and effects and rng.random() < 0.5:
            cited.append([rng.choice(zero_docs)])
        else:
            cited.append(docs)
    used = sorted({d for c in cited for d in c})
    others = [k for k in range(1, len(topic.docs) + 1) if k not in used]
    refs = used + rng.sample(others, min(len(others), rng.randint(1, 3)))
    rng.shuffle(refs)
    index = {d: j for j, d in enumerate(refs)}
    sentences = [{"text": text, "citations": sorted(index[d] for d in c)} for (text, _, _), c in zip(parts, cited)]
    answer_text = " ".join(s["text"] for s in sentences)
    labels = ["not_support"] * len(topic.nuggets)
    for _, _, effects in parts:
        for i, lab in effects.items():
            if RANK[lab] > RANK[labels[i]]:
                labels[i] = lab
    record = {
        "run_id": prof.run_id,
        "topic_id": topic.qid,
        "topic": topic.query,
        "references": [docid(topic.qid, d) for d in refs],
        "response_length": len(answer_text.split()),
        "answer": sentences,
    }
    return record, labels


# ------------------------------------------------------------------------------------------------------ files
def _jsonl(records) -> str:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)


def build() -> dict[str, str]:
    """File name -> content of the whole demo dataset."""
    _validate()
    topics = "".join(f"{t.qid}\t{t.query}\n" for t in TOPICS)
    documents = _jsonl(
        {"docid": docid(t.qid, k), "qid": t.qid, "title": title, "text": text}
        for t in TOPICS for k, (_, title, text) in enumerate(t.docs, start=1)
    )
    qrels = "".join(f"{t.qid} 0 {docid(t.qid, k)} {g}\n" for t in TOPICS for k, (g, _, _) in enumerate(t.docs, start=1))
    nuggets = _jsonl(
        {"qid": t.qid, "query": t.query, "nuggets": [{"text": n.text, "importance": "vital" if n.vital else "okay"} for n in t.nuggets]}
        for t in TOPICS
    )
    runs, assigns, stats = [], [], {}
    for prof in RUNS:
        for t in TOPICS:
            rec, labels = build_answer(t, prof)
            runs.append(rec)
            text = " ".join(s["text"] for s in rec["answer"])
            assigns.append({
                "query": t.query, "qid": t.qid, "run_id": prof.run_id, "answer_text": text,
                "response_length": rec["response_length"],
                "nuggets": [{"text": n.text, "importance": "vital" if n.vital else "okay", "assignment": lab}
                            for n, lab in zip(t.nuggets, labels)],
            })
            st = stats.setdefault(prof.run_id, Counter())
            for n, lab in zip(t.nuggets, labels):
                st[lab] += 1
                st["vital_support" if n.vital and lab == "support" else "_"] += 1
                st["vital"] += n.vital
    files = {
        "topics.tsv": topics,
        "documents.jsonl": documents,
        "qrels.txt": qrels,
        "runs.jsonl": _jsonl(runs),
        "nuggets.jsonl": nuggets,
        "assignments.jsonl": _jsonl(assigns),
    }
    files["README.md"] = _readme(stats, files)
    return files


def _validate() -> None:
    """Guard the hand-written content: ids, nugget lengths, document references, the vital share."""
    seen = set()
    n_all = n_vital = 0
    for t in TOPICS:
        assert t.qid not in seen, t.qid
        seen.add(t.qid)
        assert 6 <= len(t.docs) <= 10 and 6 <= len(t.nuggets) <= 10, t.qid
        assert sum(g == 0 for g, _, _ in t.docs) == len(t.offtopic), t.qid
        for _, _, text in t.docs:
            assert 2 <= len(re.findall(r"[.!?](\s|$)", text)) <= 5, text
        for n in t.nuggets:
            assert 5 <= len(n.text.split()) <= 12, n.text
            assert all(1 <= d <= len(t.docs) and t.docs[d - 1][0] > 0 for d in n.docs), n.text
            assert n.border is None or n.border[1] in RANK, n.text
            n_all += 1
            n_vital += n.vital
    assert 0.55 <= n_vital / n_all <= 0.65, n_vital / n_all


def _readme(stats: dict[str, Counter], files: dict[str, str]) -> str:
    n_nug = sum(len(t.nuggets) for t in TOPICS)
    n_vital = sum(n.vital for t in TOPICS for n in t.nuggets)
    lines = [
        "# metaeval demo dataset - ILLUSTRATIVE DEMO DATA, NOT REAL ASSESSMENTS",
        "",
        "Everything here was written by the metaeval authors to let you try the tool offline in seconds. The",
        "questions imitate the style of TREC 2024 RAG topics; the documents, nuggets, answers and labels are",
        f"hand-written or generated from hand-written sentences by `scripts/build_demo.py` (deterministic, seed {SEED}).",
        "No human assessor judged anything here, no real system produced these answers, and the facts are",
        "simplified everyday statements. Do not draw conclusions about real LLM judges from this data.",
        "",
        "Regenerate (from the repository root): `python scripts/build_demo.py`;",
        "`--check` verifies that the committed files equal a fresh build.",
        "",
        "## Contents",
        "",
        f"- {len(TOPICS)} topics, {sum(len(t.docs) for t in TOPICS)} documents "
        f"({sum(g > 0 for t in TOPICS for g, _, _ in t.docs)} graded relevant 1-3, the rest off-topic, grade 0),",
        f"  {n_nug} human nuggets ({n_vital} vital, {100 * n_vital / n_nug:.0f}%), {len(RUNS)} runs x {len(TOPICS)} topics "
        f"= {len(RUNS) * len(TOPICS)} answers, {len(RUNS) * n_nug} assignment labels.",
        "- `topics.tsv` (`qid<TAB>text`), `documents.jsonl` (`{docid, qid, title, text}`), `qrels.txt`",
        "  (`qid 0 docid grade`), `runs.jsonl` (TREC RAG 2024 answer format), `nuggets.jsonl`",
        "  (castorini/nuggetizer creation format), `assignments.jsonl` (NIST nugget-assignment format).",
        "",
        "## How the labels relate to the answers",
        "",
        "Each nugget has hand-written sentences: one stating it fully (label `support`), one stating it vaguely or",
        "incompletely (`partial_support`), for some a sentence contradicting it (`not_support`), and for some a",
        "judgement call whose label is our honest reading (for example \"Painting roofs white helps.\" is labelled",
        "partial support of \"Cool reflective roofs reduce heat absorption\"). A few full sentences also partly",
        "support a neighbouring nugget, and that is labelled too. An answer is made of its run's chosen",
        "sentences, and each nugget's label is the best label any of its sentences gives it, so the labels say",
        "what the answer actually says.",
        "",
        "## Runs (intended quality, and the resulting labels)",
        "",
        "| run | intended quality | support | partial | not support | vital nuggets fully supported |",
        "|---|---|---|---|---|---|",
    ]
    for prof in RUNS:
        st = stats[prof.run_id]
        lines.append(
            f"| {prof.run_id} | {prof.blurb} | {st['support']} | {st['partial_support']} | {st['not_support']} | "
            f"{st['vital_support']}/{st['vital']} ({100 * st['vital_support'] / st['vital']:.0f}%) |"
        )
    size = sum(len(c.encode("utf-8")) for c in files.values())
    lines += ["", f"Total size of the data files: {size / 1024:.0f} KB.", ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=HERE, help="output folder (default: metaeval/data/demo)")
    ap.add_argument("--check", action="store_true", help="compare with the files in --out instead of writing")
    args = ap.parse_args(argv)
    files = build()
    if args.check:
        differ = [fn for fn, content in files.items()
                  if not (args.out / fn).is_file() or (args.out / fn).read_text(encoding="utf-8") != content]
        for fn in differ:
            print(f"differs from a fresh build: {args.out / fn}", file=sys.stderr)
        return 1 if differ else 0
    args.out.mkdir(parents=True, exist_ok=True)
    for fn, content in files.items():
        (args.out / fn).write_text(content, encoding="utf-8")
    print(f"wrote {len(files)} files to {args.out} ({sum(len(c.encode()) for c in files.values()) / 1024:.0f} KB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
